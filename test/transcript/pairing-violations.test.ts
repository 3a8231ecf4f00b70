import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type PairingRules,
  type PairingViolation,
  pairingViolations,
} from '../../src/transcript/pairing-violations.ts';
import type { Message } from '../../src/transcript/records.ts';
import { assistant, call, result, system, tool, user } from './conversation-builders.ts';

/** The violations of one provider, without the provider name, for compact assertions. */
function of(messages: Message[], rules: PairingRules): Omit<PairingViolation, 'rules'>[] {
  return pairingViolations(messages, rules).map(({ rules: _rules, ...rest }) => rest);
}

const anthropicUnanswered = (id: string) =>
  `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${id}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
const anthropicUnexpected = (id: string) =>
  `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
const anthropicNotFirst = (count: number) =>
  `Did not find ${count} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`;
const chatUnanswered = (id: string) =>
  `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${id}`;
const chatNoPreceding =
  "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
const chatNotFound = (id: string) =>
  `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`;
const responsesNoOutput = (id: string) => `No tool output found for function call ${id}.`;
const responsesNoCall = (id: string) =>
  `No tool call found for function call output with call_id ${id}.`;

test('a valid conversation has no violations under any rules', () => {
  const valid = [
    system('sys'),
    user('go'),
    assistant('thinking', call('c1'), call('c2')),
    tool(result('c1'), result('c2')),
    user('and then', { injected: 'background' }),
    assistant(call('c3')),
    tool(result('c3')),
    assistant('done'),
  ];
  assert.deepEqual(pairingViolations(valid), []);
  assert.deepEqual(pairingViolations(valid, 'anthropic'), []);
});

test('one tool message per result (as OpenAI Chat sends them) is valid too', () => {
  const split = [assistant(call('c1'), call('c2')), tool(result('c2')), tool(result('c1'))];
  assert.deepEqual(pairingViolations(split), []);
});

test('an unanswered call is reported by every provider with its text', () => {
  const messages = [user('go'), assistant(call('c1'), call('c2')), tool(result('c1'))];
  assert.deepEqual(of(messages, 'anthropic'), [
    { code: 'unanswered-call', index: 1, callId: 'c2', message: anthropicUnanswered('c2') },
  ]);
  assert.deepEqual(of(messages, 'openai-chat'), [
    { code: 'unanswered-call', index: 1, callId: 'c2', message: chatUnanswered('c2') },
  ]);
  assert.deepEqual(of(messages, 'openai-responses'), [
    { code: 'unanswered-call', index: 1, callId: 'c2', message: responsesNoOutput('c2') },
  ]);
});

test('a result in a later turn: unanswered and misplaced for Anthropic and Chat, fine for Responses', () => {
  const messages = [assistant(call('c1')), user('well?'), assistant('waiting'), tool(result('c1'))];
  assert.deepEqual(of(messages, 'anthropic'), [
    { code: 'unanswered-call', index: 0, callId: 'c1', message: anthropicUnanswered('c1') },
    { code: 'misplaced-result', index: 3, callId: 'c1', message: anthropicUnexpected('c1') },
  ]);
  assert.deepEqual(of(messages, 'openai-chat'), [
    { code: 'unanswered-call', index: 0, callId: 'c1', message: chatUnanswered('c1') },
    { code: 'misplaced-result', index: 3, callId: 'c1', message: chatNoPreceding },
  ]);
  assert.deepEqual(of(messages, 'openai-responses'), []);
});

test('an orphan result (never asked) is reported by every provider', () => {
  const messages = [user('go'), assistant(call('c1')), tool(result('c1'), result('zz'))];
  assert.deepEqual(of(messages, 'anthropic'), [
    { code: 'orphan-result', index: 2, callId: 'zz', message: anthropicUnexpected('zz') },
  ]);
  assert.deepEqual(of(messages, 'openai-chat'), [
    { code: 'orphan-result', index: 2, callId: 'zz', message: chatNotFound('zz') },
  ]);
  assert.deepEqual(of(messages, 'openai-responses'), [
    { code: 'orphan-result', index: 2, callId: 'zz', message: responsesNoCall('zz') },
  ]);
});

test('a result at the very start has no call before it', () => {
  const messages = [tool(result('c1')), user('hi')];
  assert.deepEqual(
    pairingViolations(messages).map((violation) => [violation.rules, violation.message]),
    [
      ['anthropic', anthropicUnexpected('c1')],
      ['openai-chat', chatNoPreceding],
      ['openai-responses', responsesNoCall('c1')],
    ],
  );
});

test('a result before its call is misplaced, and the call is unanswered', () => {
  const messages = [user('go'), tool(result('c1')), assistant(call('c1'))];
  const codes = pairingViolations(messages).map((violation) => [violation.rules, violation.code]);
  assert.deepEqual(codes, [
    ['anthropic', 'misplaced-result'],
    ['anthropic', 'unanswered-call'],
    ['openai-chat', 'misplaced-result'],
    ['openai-chat', 'unanswered-call'],
    ['openai-responses', 'misplaced-result'],
    ['openai-responses', 'unanswered-call'],
  ]);
});

test('a user message between the calls and their results: results not first (Anthropic)', () => {
  const messages = [
    assistant(call('c1'), call('c2')),
    user('interjection'),
    tool(result('c1'), result('c2')),
  ];
  assert.deepEqual(of(messages, 'anthropic'), [
    { code: 'result-not-first', index: 2, callId: 'c1', message: anthropicNotFirst(2) },
    { code: 'result-not-first', index: 2, callId: 'c2', message: anthropicNotFirst(2) },
  ]);
  assert.deepEqual(of(messages, 'openai-chat'), [
    { code: 'unanswered-call', index: 0, callId: 'c1', message: chatUnanswered('c1') },
    { code: 'unanswered-call', index: 0, callId: 'c2', message: chatUnanswered('c2') },
    { code: 'misplaced-result', index: 2, callId: 'c1', message: chatNoPreceding },
    { code: 'misplaced-result', index: 2, callId: 'c2', message: chatNoPreceding },
  ]);
});

test('results of one batch split around a user message: not together (Anthropic), misplaced (Chat)', () => {
  const messages = [
    assistant(call('c1'), call('c2')),
    tool(result('c1')),
    user('background', { injected: 'background' }),
    tool(result('c2')),
  ];
  assert.deepEqual(of(messages, 'anthropic'), [
    { code: 'result-not-first', index: 3, callId: 'c2', message: anthropicNotFirst(2) },
  ]);
  assert.deepEqual(of(messages, 'openai-chat'), [
    { code: 'unanswered-call', index: 0, callId: 'c2', message: chatUnanswered('c2') },
    { code: 'misplaced-result', index: 3, callId: 'c2', message: chatNoPreceding },
  ]);
  assert.deepEqual(of(messages, 'openai-responses'), []);
});

test('a tool message followed by a user message is one user turn with the results first', () => {
  const messages = [
    assistant(call('c1')),
    tool(result('c1')),
    user('resumed', { injected: 'revival' }),
  ];
  assert.deepEqual(pairingViolations(messages), []);
});

test('a system message between the calls and their results breaks adjacency', () => {
  const messages = [assistant(call('c1')), system('note'), tool(result('c1'))];
  assert.deepEqual(
    of(messages, 'anthropic').map((violation) => violation.code),
    ['unanswered-call', 'misplaced-result'],
  );
  assert.deepEqual(
    of(messages, 'openai-chat').map((violation) => violation.code),
    ['unanswered-call', 'misplaced-result'],
  );
});

test('consecutive assistant messages: one turn for Anthropic, two for Chat', () => {
  const messages = [assistant(call('c1')), assistant(call('c2')), tool(result('c1'), result('c2'))];
  assert.deepEqual(of(messages, 'anthropic'), []);
  assert.deepEqual(of(messages, 'openai-chat'), [
    { code: 'unanswered-call', index: 0, callId: 'c1', message: chatUnanswered('c1') },
    { code: 'misplaced-result', index: 2, callId: 'c1', message: chatNotFound('c1') },
  ]);
});

test('a duplicate answer in the next turn is reported by every provider', () => {
  const messages = [assistant(call('c1')), tool(result('c1', 'one')), tool(result('c1', 'two'))];
  assert.deepEqual(of(messages, 'anthropic'), [
    {
      code: 'duplicate-result',
      index: 2,
      callId: 'c1',
      message:
        'each tool_use must have a single result. Found multiple `tool_result` blocks with id: c1',
    },
  ]);
  assert.deepEqual(of(messages, 'openai-chat'), [
    {
      code: 'duplicate-result',
      index: 2,
      callId: 'c1',
      message:
        "Invalid parameter: Duplicate value for 'tool_call_id' of 'c1', in messages[1] and messages[2].",
    },
  ]);
  assert.deepEqual(of(messages, 'openai-responses'), [
    {
      code: 'duplicate-result',
      index: 2,
      callId: 'c1',
      message: 'Duplicate function call output for call_id c1.',
    },
  ]);
});

test('a duplicate answer in a later turn is a duplicate for every provider, in its own words', () => {
  const messages = [assistant(call('c1')), tool(result('c1')), assistant('ok'), tool(result('c1'))];
  const found = pairingViolations(messages).map((violation) => [
    violation.rules,
    violation.code,
    violation.index,
  ]);
  assert.deepEqual(found, [
    ['anthropic', 'duplicate-result', 3],
    ['openai-chat', 'duplicate-result', 3],
    ['openai-responses', 'duplicate-result', 3],
  ]);
});

test('duplicate call ids: within a turn everywhere; across turns only Anthropic and Responses', () => {
  const within = [assistant(call('c1'), call('c1')), tool(result('c1'))];
  assert.deepEqual(
    pairingViolations(within).map((violation) => [
      violation.rules,
      violation.code,
      violation.index,
    ]),
    [
      ['anthropic', 'duplicate-call-id', 0],
      ['openai-chat', 'duplicate-call-id', 0],
      ['openai-responses', 'duplicate-call-id', 0],
    ],
  );
  assert.equal(pairingViolations(within, 'anthropic')[0]?.message, '`tool_use` ids must be unique');

  const across = [
    assistant(call('call_0')),
    tool(result('call_0')),
    assistant(call('call_0')),
    tool(result('call_0')),
  ];
  assert.deepEqual(
    pairingViolations(across).map((violation) => [
      violation.rules,
      violation.code,
      violation.index,
    ]),
    [
      ['anthropic', 'duplicate-call-id', 2],
      ['openai-responses', 'duplicate-call-id', 2],
      ['openai-responses', 'duplicate-result', 3],
    ],
  );
});

test('call ids Anthropic refuses: bad characters, more than 64 characters', () => {
  const long = 'a'.repeat(65);
  const messages = [
    assistant(call('fn.eval:301'), call(long), call('a'.repeat(64))),
    tool(result('fn.eval:301'), result(long), result('a'.repeat(64))),
  ];
  assert.deepEqual(of(messages, 'anthropic'), [
    {
      code: 'invalid-call-id',
      index: 0,
      callId: 'fn.eval:301',
      message: "String should match pattern '^[a-zA-Z0-9_-]+$'",
    },
    {
      code: 'invalid-call-id',
      index: 0,
      callId: long,
      message: 'String should have at most 64 characters',
    },
  ]);
  assert.deepEqual(
    of([assistant(call('')), tool(result(''))], 'anthropic').map((violation) => violation.code),
    ['invalid-call-id'],
  );
});

test('call ids OpenAI Chat refuses: more than 40 characters', () => {
  const long = `call_${'x'.repeat(36)}`;
  const messages = [
    user('go'),
    assistant(call('ok'), call(long)),
    tool(result('ok'), result(long)),
  ];
  assert.deepEqual(of(messages, 'openai-chat'), [
    {
      code: 'invalid-call-id',
      index: 1,
      callId: long,
      message: `Invalid 'messages[1].tool_calls[1].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead.`,
    },
  ]);
  assert.deepEqual(of(messages, 'openai-responses'), []);
});

test('the rules argument picks one provider; the default checks all three', () => {
  const messages = [assistant(call('c1'))];
  assert.deepEqual(
    pairingViolations(messages).map((violation) => violation.rules),
    ['anthropic', 'openai-chat', 'openai-responses'],
  );
  assert.deepEqual(pairingViolations(messages, 'all'), pairingViolations(messages));
  for (const rules of ['anthropic', 'openai-chat', 'openai-responses'] as const) {
    assert.deepEqual(
      pairingViolations(messages, rules).map((violation) => violation.rules),
      [rules],
    );
  }
});

test('stray results: orphan (asked nowhere), duplicate (already answered), misplaced (unanswered)', () => {
  const messages = [
    assistant(call('c1'), call('c2')),
    tool(result('c1')),
    assistant('thinking'),
    tool(result('c1', 'again'), result('c2'), result('ghost')),
  ];
  for (const rules of ['anthropic', 'openai-chat'] as const) {
    assert.deepEqual(
      pairingViolations(messages, rules).map((violation) => [violation.code, violation.callId]),
      [
        ['unanswered-call', 'c2'],
        ['duplicate-result', 'c1'],
        ['misplaced-result', 'c2'],
        ['orphan-result', 'ghost'],
      ],
      rules,
    );
  }
  assert.deepEqual(
    pairingViolations(messages, 'openai-responses').map((violation) => [
      violation.code,
      violation.callId,
    ]),
    [
      ['duplicate-result', 'c1'],
      ['orphan-result', 'ghost'],
    ],
  );
});
