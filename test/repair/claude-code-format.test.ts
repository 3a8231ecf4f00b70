import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { claudeCodeFormat } from '../../src/repair/claude-code-format.ts';
import type { ForeignLine, PlanContext, RepairPlan } from '../../src/repair/foreign-format.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import { mutateValue, mutationRounds } from './support/mutations.ts';

/*
 * The Claude Code session format (src/repair/claude-code-format.ts) on sessions the real client
 * wrote (test/fixtures/foreign/claude-code/, README there): Claude Code 2.1.197 killed mid-tool
 * with one and with two calls of one message in flight, a session that ran to its end (its own
 * result lines, a failed command among them), a killed session resumed as it was left, and one
 * repaired and then resumed. Then the same files changed the ways Claude Code's loader cares
 * about (branches, last-prompt leaves, progress lines, compaction) and mutated at random: never
 * a throw, never a line that is not Claude Code's own shape.
 */

const FIXTURES = new URL('../fixtures/foreign/claude-code/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const NAMES = [
  'killed-one-call.jsonl',
  'killed-two-calls.jsonl',
  'complete.jsonl',
  'resumed-unrepaired.jsonl',
  'repaired-resumed.jsonl',
];

const NOW = new Date('2026-12-04T10:00:00.123Z');
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Deterministic "random" bytes: 0x11, 0x12, … */
function counterBytes(): PlanContext['randomBytes'] {
  let next = 0x11;
  return (count) => Uint8Array.from({ length: count }, () => next++ & 0xff);
}
const context = (randomBytes = counterBytes()): PlanContext => ({ now: NOW, randomBytes });

/** The file as repair-session reads it: split on `\n` only, a torn last line left out. */
/** The lines repair reads from a session's text (the shell's own splitting). */
const linesOf = (text: string): ForeignLine[] => [...sessionLines(Buffer.from(text)).lines];

function plan(text: string, randomBytes?: PlanContext['randomBytes']): RepairPlan {
  return claudeCodeFormat.plan(linesOf(text), context(randomBytes));
}

function repaired(result: RepairPlan): Extract<RepairPlan, { kind: 'repair' }> {
  assert.equal(result.kind, 'repair', JSON.stringify(result));
  return result as Extract<RepairPlan, { kind: 'repair' }>;
}

function detail(result: RepairPlan): string {
  assert.notEqual(result.kind, 'repair', JSON.stringify(result));
  return (result as { detail: string }).detail;
}

type Line = Record<string, unknown>;
const parse = (line: string) => JSON.parse(line) as Line;
/** Line `number` (1-based) of a file. */
const lineOf = (text: string, number: number) => parse(text.split('\n')[number - 1] as string);
/** The first `count` lines of a file. */
const head = (text: string, count: number) => `${text.split('\n').slice(0, count).join('\n')}\n`;
const jsonl = (value: unknown) => `${JSON.stringify(value)}\n`;

/** A message line in the envelope Claude Code 2.1.197 wrote in the fixture `of`. */
function envelope(of: Line, fields: Line): Line {
  return {
    isSidechain: false,
    userType: of.userType,
    entrypoint: of.entrypoint,
    cwd: of.cwd,
    sessionId: of.sessionId,
    version: of.version,
    gitBranch: of.gitBranch,
    timestamp: '2026-12-04T05:00:00.000Z',
    ...fields,
  };
}

describe('detect', () => {
  test('recognises every session the client wrote, with its version', () => {
    for (const name of NAMES) {
      const lines = linesOf(fixture(name));
      const { session, ...detected } = claudeCodeFormat.detect(lines) ?? {};
      assert.deepEqual(detected, { format: 'claude-code', version: '2.1.197', supported: true });
      // The session's id and folder, for liveness: those of its message lines.
      const last = lines.findLast((line) => (line.value as { uuid?: unknown }).uuid !== undefined)
        ?.value as { sessionId: string; cwd: string };
      assert.deepEqual(session, { id: last.sessionId, cwd: last.cwd }, name);
    }
  });

  test('any 2.1.x is supported; the version is the last message line that has one', () => {
    const text = fixture('killed-one-call.jsonl');
    assert.equal(
      claudeCodeFormat.detect(linesOf(text.replaceAll('"version":"2.1.197"', '"version":"2.1.3"')))
        ?.supported,
      true,
    );
    // Begun by 2.0.76, resumed by 2.1.197: the last writer counts.
    const older = text.replace('"version":"2.1.197"', '"version":"2.0.76"');
    assert.equal(claudeCodeFormat.detect(linesOf(older))?.version, '2.1.197');
    const newer = `${text}${jsonl(envelope(lineOf(text, 7), { type: 'system', uuid: 'u-x', parentUuid: null, version: '2.2.0' }))}`;
    assert.equal(claudeCodeFormat.detect(linesOf(newer))?.supported, false);
  });

  test('a version outside the tested range is recognised as Claude Code and refused, naming it', () => {
    const text = fixture('killed-one-call.jsonl');
    const as = (version: string) =>
      claudeCodeFormat.detect(
        linesOf(text.replaceAll('"version":"2.1.197"', `"version":${JSON.stringify(version)}`)),
      );
    for (const version of ['1.0.97', '0.2.126', '2.1', '2.1.197-beta', 'x\u001b[2J']) {
      const detection = as(version);
      assert.equal(detection?.format, 'claude-code', version);
      assert.equal(detection?.supported, false, version);
      assert.equal(detection?.newerThan, undefined, version);
      assert.match(detection?.reason ?? '', /1\.0\.98 to 2\.1\.332/);
      assert.equal(detection?.version.includes('\u001b'), false);
    }
    // Newer than the newest tested: refused unless --allow-newer, naming both.
    for (const version of ['2.1.333', '2.2.0', '3.0.0']) {
      const detection = as(version);
      assert.equal(detection?.supported, false, version);
      assert.equal(detection?.newerThan, '2.1.332', version);
      assert.match(
        detection?.reason ?? '',
        new RegExp(`${version.replaceAll('.', '\\.')}, newer than 2\\.1\\.332`),
      );
    }
    // Inside the range: accepted.
    for (const version of ['1.0.98', '2.0.76', '2.1.332'])
      assert.equal(as(version)?.supported, true);
  });

  test("other files, and other clients' sessions, are not Claude Code's", () => {
    const others = [
      '',
      'not json\n',
      '{"type":"queue-operation","operation":"enqueue","sessionId":"s"}\n',
      '{"type":"user","uuid":"u","message":{"role":"user","content":"hi"}}\n', // no envelope
      '{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s"}\n', // no version
      '{"type":"user","uuid":"u","parentUuid":7,"sessionId":"s","version":"2.1.197"}\n',
      '{"type":"summary","summary":"s","leafUuid":"u"}\n',
      '[{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","version":"2.1.197"}]\n',
      'null\n',
      readFileSync(
        new URL('../fixtures/foreign/pi/crash-two-calls.v3.jsonl', import.meta.url),
        'utf8',
      ),
      readFileSync(
        new URL('../fixtures/foreign/codex/killed-two-calls.jsonl', import.meta.url),
        'utf8',
      ),
    ];
    for (const text of others) assert.equal(claudeCodeFormat.detect(linesOf(text)), null, text);
  });
});

describe('plan on sessions the client wrote', () => {
  test("one call cut off: one user line, Claude Code's own shape for a failed tool", () => {
    const text = fixture('killed-one-call.jsonl');
    const result = repaired(plan(text));
    assert.deepEqual(result.calls, [
      { callId: 'toolu_killed_one_call_1', toolName: 'Bash', line: 7 },
    ]);
    assert.equal(result.append.length, 1);
    const call = lineOf(text, 7);
    const entry = parse(result.append[0] as string);
    assert.deepEqual(entry, {
      parentUuid: call.uuid,
      isSidechain: false,
      promptId: lineOf(text, 3).promptId,
      type: 'user',
      message: {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            content: INTERRUPTED_MESSAGE,
            is_error: true,
            tool_use_id: 'toolu_killed_one_call_1',
          },
        ],
      },
      uuid: '11121314-1516-4718-991a-1b1c1d1e1f20',
      timestamp: '2026-12-04T10:00:00.123Z',
      toolUseResult: `Error: ${INTERRUPTED_MESSAGE}`,
      sourceToolAssistantUUID: call.uuid,
      userType: 'external',
      entrypoint: 'sdk-cli',
      cwd: call.cwd,
      sessionId: '7c0d3c2e-8a11-4b5e-9f00-000000000001',
      version: '2.1.197',
      gitBranch: call.gitBranch,
    });
    // Claude Code's own line for a command that failed (complete.jsonl line 11): the same keys
    // in the same order, the same block keys, the prompt's promptId, "Error: …".
    const own = lineOf(fixture('complete.jsonl'), 11);
    assert.deepEqual(Object.keys(entry), Object.keys(own));
    const ownBlock = (own.message as { content: Line[] }).content[0] as Line;
    const block = (entry.message as { content: Line[] }).content[0] as Line;
    assert.deepEqual(Object.keys(block), Object.keys(ownBlock));
    assert.equal(ownBlock.is_error, true);
    assert.match(String(own.toolUseResult), /^Error: /);
    assert.equal(own.promptId, lineOf(fixture('complete.jsonl'), 3).promptId);
  });

  test('two calls of one message cut off: two lines, chained from the last line, fresh uuids', () => {
    const text = fixture('killed-two-calls.jsonl');
    const result = repaired(plan(text));
    assert.deepEqual(
      result.calls.map((call) => [call.callId, call.line]),
      [
        ['toolu_killed_two_calls_1', 7],
        ['toolu_killed_two_calls_2', 8],
      ],
    );
    const [first, second] = result.append.map(parse);
    assert.equal(first?.parentUuid, lineOf(text, 8).uuid);
    assert.equal(second?.parentUuid, first?.uuid);
    assert.equal(first?.sourceToolAssistantUUID, lineOf(text, 7).uuid);
    assert.equal(second?.sourceToolAssistantUUID, lineOf(text, 8).uuid);
    const uuids = new Set(linesOf(text).map((line) => (line.value as Line).uuid));
    for (const entry of [first, second]) {
      assert.match(String(entry?.uuid), UUID_V4);
      assert.ok(!uuids.has(entry?.uuid));
    }
    assert.notEqual(first?.uuid, second?.uuid);
  });

  test('a session that ran to its end is clean; cut after any line, only what lacks a result', () => {
    const text = fixture('complete.jsonl');
    assert.match(detail(plan(text)), /line 13\) calls no tool/);
    // Cut after the call of line 7: it has no result.
    assert.deepEqual(
      repaired(plan(head(text, 7))).calls.map((call) => call.callId),
      ['toolu_ok_1'],
    );
    assert.match(detail(plan(head(text, 8))), /every tool call .*line 7\) has a result/);
    // Lines 9 and 10 are one message with two calls; Claude Code parents each result on its
    // call's line, so line 11 (the result of line 9) is a branch beside line 10.
    assert.deepEqual(
      repaired(plan(head(text, 10))).calls.map((call) => call.callId),
      ['toolu_exit_1', 'toolu_ok_2'],
    );
    const one = repaired(plan(head(text, 11)));
    assert.deepEqual(one.calls, [{ callId: 'toolu_ok_2', toolName: 'Bash', line: 10 }]);
    const entry = parse(one.append[0] as string);
    assert.equal(entry.parentUuid, lineOf(text, 11).uuid);
    assert.equal(entry.sourceToolAssistantUUID, lineOf(text, 10).uuid);
    assert.match(detail(plan(head(text, 12))), /has a result/);
  });

  test('a killed session resumed as it was left is reported as resumed: Claude Code dropped the call silently', () => {
    const text = fixture('resumed-unrepaired.jsonl');
    // Claude Code dropped the call (line 7) and parented "continue" on the text before it.
    assert.equal(lineOf(text, 10).parentUuid, lineOf(text, 6).uuid);
    const result = plan(text);
    assert.ok(result.kind === 'resumed', JSON.stringify(result));
    assert.deepEqual(
      result.calls.map((call) => call.line),
      [7],
    );
    assert.match(result.told, /dropped the calls silently .* never told of them/);
    assert.match(result.detail, /off the conversation Claude Code resumes/);
  });

  test('a repaired session that Claude Code resumed is clean, and its own lines follow ours', () => {
    const text = fixture('repaired-resumed.jsonl');
    assert.match(detail(plan(text)), /line 16\) calls no tool/);
    assert.equal(lineOf(text, 13).parentUuid, lineOf(text, 10).uuid);
    assert.equal(plan(head(text, 10)).kind, 'clean');
  });
});

describe('plan on changed sessions', () => {
  const text = fixture('killed-two-calls.jsonl');
  const last = lineOf(text, 8);
  const message = (fields: Line) => jsonl(envelope(last, fields));

  test('an attachment after the calls: the results chain from it', () => {
    const attachment = message({
      type: 'attachment',
      parentUuid: last.uuid,
      uuid: 'aaaaaaaa-0000-4000-8000-000000000001',
      attachment: { type: 'queued_command', prompt: 'also check the logs', commandMode: 'prompt' },
    });
    const result = repaired(plan(text + attachment));
    assert.equal(result.calls.length, 2);
    assert.equal(
      parse(result.append[0] as string).parentUuid,
      'aaaaaaaa-0000-4000-8000-000000000001',
    );
  });

  test('lines that are not messages are passed over; progress lines are folded out', () => {
    const progress = message({
      type: 'progress',
      parentUuid: last.uuid,
      uuid: 'bbbbbbbb-0000-4000-8000-000000000001',
      data: { type: 'bash_progress' },
    });
    const others = [
      jsonl({ type: 'file-history-snapshot', messageId: 'm', snapshot: {} }),
      jsonl({ type: 'queue-operation', operation: 'enqueue', sessionId: last.sessionId }),
      jsonl({ type: 'last-prompt', lastPrompt: 'x', leafUuid: lineOf(text, 3).uuid }),
      jsonl({ type: 'mode', mode: 'normal', sessionId: last.sessionId }),
      'not json at all\n',
    ].join('');
    const result = repaired(plan(text + progress + others));
    assert.equal(result.calls.length, 2);
    assert.equal(parse(result.append[0] as string).parentUuid, last.uuid);
    // A message parented on a progress line hangs on that line's parent.
    const attached = message({
      type: 'attachment',
      parentUuid: 'bbbbbbbb-0000-4000-8000-000000000001',
      uuid: 'cccccccc-0000-4000-8000-000000000001',
      attachment: { type: 'queued_command', prompt: 'p' },
    });
    const through = repaired(plan(text + progress + attached));
    assert.equal(
      parse(through.append[0] as string).parentUuid,
      'cccccccc-0000-4000-8000-000000000001',
    );
  });

  test("one call answered in Claude Code's own shape: only the other is answered", () => {
    const own = lineOf(fixture('complete.jsonl'), 11);
    const result1 = jsonl({
      ...own,
      parentUuid: lineOf(text, 7).uuid,
      uuid: 'dddddddd-0000-4000-8000-000000000001',
      message: {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            content: 'x',
            is_error: true,
            tool_use_id: 'toolu_killed_two_calls_1',
          },
        ],
      },
    });
    const result = repaired(plan(text + result1));
    assert.deepEqual(
      result.calls.map((call) => call.callId),
      ['toolu_killed_two_calls_2'],
    );
    assert.equal(
      parse(result.append[0] as string).parentUuid,
      'dddddddd-0000-4000-8000-000000000001',
    );
  });

  test('sidechain lines are not the main conversation', () => {
    const side = message({
      type: 'assistant',
      isSidechain: true,
      parentUuid: null,
      uuid: 'eeeeeeee-0000-4000-8000-000000000001',
      message: {
        id: 'msg_side',
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_side', name: 'Read', input: {} }],
      },
    });
    const result = repaired(plan(text + side));
    assert.deepEqual(
      result.calls.map((call) => call.callId),
      ['toolu_killed_two_calls_1', 'toolu_killed_two_calls_2'],
    );
    assert.equal(parse(result.append[0] as string).parentUuid, last.uuid);
  });

  test("a subagent's transcript (every message a sidechain's) is repaired as its own conversation", () => {
    const subagent = text
      .replaceAll('"isSidechain":false', '"isSidechain":true')
      .replaceAll('"isSidechain":true,', '"isSidechain":true,"agentId":"a1b2c3",');
    const result = repaired(plan(subagent));
    assert.deepEqual(
      result.calls.map((call) => call.callId),
      ['toolu_killed_two_calls_1', 'toolu_killed_two_calls_2'],
    );
    for (const line of result.append) {
      const appended = parse(line);
      assert.equal(appended.isSidechain, true, 'on the sidechain, as Claude Code writes it there');
      assert.equal(appended.agentId, 'a1b2c3');
    }
    assert.equal(parse(result.append[0] as string).parentUuid, last.uuid);
    // A result on the sidechain answers it; a second plan is clean.
    assert.equal(plan(`${subagent}${result.append.join('\n')}\n`).kind, 'clean');
  });

  test('a user turn after the cut-off calls: resumed without a repair, the calls dropped', () => {
    const prompt = message({
      type: 'user',
      parentUuid: last.uuid,
      uuid: 'ffffffff-0000-4000-8000-000000000001',
      message: { role: 'user', content: 'continue' },
    });
    assert.match(detail(plan(text + prompt)), /went on after them \(line 9\)/);
    const interrupted = message({
      type: 'user',
      parentUuid: last.uuid,
      uuid: 'ffffffff-0000-4000-8000-000000000002',
      message: {
        role: 'user',
        content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }],
      },
    });
    assert.equal(plan(text + interrupted).kind, 'resumed');
  });

  test('last-prompt leaves: another branch is refused, a clear is clean, an ancestor is fine', () => {
    const branch = message({
      type: 'user',
      parentUuid: lineOf(text, 6).uuid,
      uuid: '12121212-0000-4000-8000-000000000001',
      message: { role: 'user', content: 'elsewhere' },
    });
    // The newest message (line 8) does not descend from the named leaf.
    const named = `${head(text, 7)}${branch}${text.split('\n')[7]}\n${jsonl({ type: 'last-prompt', lastPrompt: 'x', leafUuid: '12121212-0000-4000-8000-000000000001' })}`;
    assert.match(detail(plan(named)), /another branch/);
    const rewound = `${text}${jsonl({ type: 'last-prompt', lastPrompt: 'x', leafUuid: lineOf(text, 6).uuid, explicit: true })}`;
    assert.match(detail(plan(rewound)), /another branch/);
    const cleared = `${text}${jsonl({ type: 'last-prompt', leafUuid: null, explicit: true })}`;
    assert.match(detail(plan(cleared)), /cleared/);
    const ancestor = `${text}${jsonl({ type: 'last-prompt', lastPrompt: 'x', leafUuid: lineOf(text, 3).uuid })}`;
    assert.equal(plan(ancestor).kind, 'repair');
    const self = `${text}${jsonl({ type: 'last-prompt', lastPrompt: 'x', leafUuid: last.uuid, explicit: true })}`;
    assert.equal(plan(self).kind, 'repair');
  });

  test('a compaction after the calls: they are not sent any more; the session was resumed without a repair', () => {
    const boundary = message({
      type: 'system',
      subtype: 'compact_boundary',
      parentUuid: null,
      logicalParentUuid: last.uuid,
      uuid: '13131313-0000-4000-8000-000000000001',
      content: 'Conversation compacted',
      compactMetadata: { trigger: 'auto', preTokens: 1 },
    });
    const summary = message({
      type: 'user',
      parentUuid: '13131313-0000-4000-8000-000000000001',
      uuid: '13131313-0000-4000-8000-000000000002',
      isCompactSummary: true,
      message: { role: 'user', content: 'summary' },
    });
    const result = plan(text + boundary + summary);
    assert.equal(result.kind, 'resumed');
    assert.match(detail(result), /off the conversation Claude Code resumes/);
  });

  test('shapes Claude Code itself cannot load or pair are refused, never guessed', () => {
    const cases: [string, RegExp][] = [
      [`${text}42\n`, /not an object/],
      [`${text}null\n`, /not an object/],
      [`${text}[1]\n`, /not an object/],
      [
        `${text}${message({ type: 'attachment', uuid: 'a-1', parentUuid: 'not-in-the-file', attachment: {} })}`,
        /names no message/,
      ],
      [
        `${text}${message({ type: 'attachment', uuid: 'a-1', parentUuid: 'a-2', attachment: {} })}${message({ type: 'attachment', uuid: 'a-2', parentUuid: 'a-1', attachment: {} })}`,
        /loops/,
      ],
      [text.replace('"id":"toolu_killed_two_calls_2",', ''), /without a string id/],
      [
        text.replace(
          '"name":"Bash","input":{"command":"echo started > /tmp',
          '"input":{"command":"echo started > /tmp',
        ),
        /without a string id and name/,
      ],
      [
        `${text}${message({ type: 'user', parentUuid: last.uuid, message: { role: 'user', content: 'x' } })}`,
        /without a uuid/,
      ],
      [
        `${text}${message({ type: 'user', uuid: 'u-9', parentUuid: 5, message: { role: 'user', content: 'x' } })}`,
        /neither a uuid nor null/,
      ],
    ];
    for (const [changed, reason] of cases) {
      const result = plan(changed);
      assert.equal(result.kind, 'refuse', `${reason}: ${JSON.stringify(result)}`);
      assert.match(detail(result), reason);
    }
    const noContent = text.replace(
      /"content":\[\{"type":"tool_use","id":"toolu_killed_two_calls_2".*?\}\}\]/,
      '"content":7',
    );
    assert.match(detail(plan(noContent)), /content is not text or a list/);
    const badClock = claudeCodeFormat.plan(linesOf(text), {
      now: new Date(Number.NaN),
      randomBytes: counterBytes(),
    });
    assert.match(detail(badClock), /clock/);
    // A random source that keeps repeating: the second uuid collides with the first.
    assert.match(detail(plan(text, () => new Uint8Array(16))), /no fresh uuid/);
  });

  test('a break in the chain above the cut-off message does not matter', () => {
    const missing = text.replace(
      `"parentUuid":"${String(last.parentUuid)}"`,
      '"parentUuid":"not-in-the-file"',
    );
    // Line 8 hangs on nothing, but it is the message: both its calls (line 7 by message.id).
    assert.deepEqual(
      repaired(plan(missing)).calls.map((call) => call.callId),
      ['toolu_killed_two_calls_1', 'toolu_killed_two_calls_2'],
    );
    const loop = text.replace('"parentUuid":null', `"parentUuid":"${String(last.uuid)}"`);
    assert.equal(repaired(plan(loop)).calls.length, 2);
  });

  test('no assistant message yet is clean; a file without messages is not recognised', () => {
    assert.equal(claudeCodeFormat.detect(linesOf(head(text, 2))), null);
    assert.match(detail(plan(head(text, 3))), /no assistant message/);
    assert.match(detail(plan(head(text, 5))), /no assistant message/);
    assert.match(detail(plan(head(text, 6))), /calls no tool/);
  });
});

describe('mutated sessions never throw', () => {
  const odd: unknown[] = [
    null,
    0,
    -1,
    1e308,
    '',
    'x',
    '\u2028',
    '\u001b[2J',
    true,
    [],
    [null],
    {},
    { type: 'tool_use' },
    { type: 'tool_use', id: 'toolu_x', name: 'Bash', input: {} },
    { type: 'tool_result', tool_use_id: 'toolu_killed_two_calls_1' },
    'user',
    'assistant',
    'attachment',
    'progress',
    'last-prompt',
    'compact_boundary',
  ];

  const KEYS = ['uuid', 'parentUuid', 'type', 'message', 'isSidechain', 'leafUuid', 'id'];

  test('3000 mutations of the client-written sessions: a plan of Claude Code shapes, or a reason', () => {
    mutationRounds({
      format: claudeCodeFormat,
      sessions: NAMES.map((name) => fixture(name)),
      next: seededRandom(testSeed('claude-code mutations')),
      odd,
      keys: KEYS,
      context,
      checkRepair(result, parsed) {
        const uuids = new Set(parsed.map((line) => (line.value as Line | undefined)?.uuid));
        let parent: unknown;
        for (const [index, appended] of result.append.entries()) {
          const entry = parse(appended);
          assert.equal(entry.type, 'user');
          assert.deepEqual(entry.message, {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                content: INTERRUPTED_MESSAGE,
                is_error: true,
                tool_use_id: result.calls[index]?.callId,
              },
            ],
          });
          assert.equal(entry.toolUseResult, `Error: ${INTERRUPTED_MESSAGE}`);
          assert.match(String(entry.uuid), UUID_V4);
          assert.ok(!uuids.has(entry.uuid));
          assert.equal(typeof entry.parentUuid, 'string');
          if (index > 0) assert.equal(entry.parentUuid, parent);
          assert.equal(typeof entry.sourceToolAssistantUUID, 'string');
          parent = entry.uuid;
        }
      },
    });
  });

  test('random lines, random bytes: detect and plan never throw', () => {
    const next = seededRandom(testSeed('claude-code random lines'));
    const base = lineOf(fixture('killed-one-call.jsonl'), 7);
    for (let round = 0; round < 1000; round += 1) {
      const lines: string[] = [];
      const count = Math.floor(next() * 8);
      for (let index = 0; index < count; index += 1) {
        const how = next();
        if (how < 0.4) lines.push(JSON.stringify(mutateValue(base, next, odd, KEYS)));
        else if (how < 0.6) lines.push(JSON.stringify(odd[Math.floor(next() * odd.length)]));
        else {
          const bytes = Array.from({ length: Math.floor(next() * 40) }, () =>
            String.fromCharCode(Math.floor(next() * 0x3000)),
          ).join('');
          lines.push(bytes.replaceAll('\n', ''));
        }
      }
      const parsed = linesOf(`${lines.join('\n')}\n`);
      claudeCodeFormat.detect(parsed);
      const result = claudeCodeFormat.plan(parsed, context());
      assert.ok(['repair', 'clean', 'refuse', 'resumed'].includes(result.kind));
      // The wrapper's safety net (a refusal naming an exception) must never be needed.
      assert.doesNotMatch(JSON.stringify(result), /could not plan a repair/);
    }
  });
});

describe('repairSession on a copy of a client-written session', () => {
  let folder: string;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'llm-agent-claude-code-format-'));
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  for (const name of ['killed-one-call.jsonl', 'killed-two-calls.jsonl']) {
    test(`${name}: append-only, backup byte-exact, a second repair is clean`, async () => {
      const original = await readFile(new URL(name, FIXTURES));
      const path = join(folder, name);
      await writeFile(path, original);
      const old = new Date(Date.now() - 60_000);
      await utimes(path, old, old);
      const outcome = await repairSession(path);
      assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
      if (outcome.status !== 'repaired') return;
      assert.equal(outcome.detection.format, 'claude-code');
      const after = await readFile(path);
      assert.ok(after.subarray(0, original.length).equals(original), 'original bytes are a prefix');
      assert.ok((await readFile(outcome.backup)).equals(original), 'backup equals the original');
      const added = after.subarray(original.length).toString('utf8').split('\n');
      assert.equal(added.pop(), '');
      assert.equal(added.length, outcome.calls.length);
      await utimes(path, old, old);
      const again = await repairSession(path);
      assert.equal(again.status, 'clean', JSON.stringify(again));
      assert.ok((await readFile(path)).equals(after), 'the second repair wrote nothing');
    });
  }

  test('a file changed a moment ago is refused as live without --force', async () => {
    const original = await readFile(new URL('killed-one-call.jsonl', FIXTURES));
    const path = join(folder, 'live.jsonl');
    await writeFile(path, original);
    // Quiet for ten minutes to count as left alone: just written is live on any machine.
    const outcome = await repairSession(path, { quietMs: 600_000 });
    assert.equal(outcome.status, 'refused');
    assert.equal(outcome.status === 'refused' && outcome.reason, 'live');
    assert.match(outcome.status === 'refused' ? outcome.detail : '', /changed \d+ ms ago/);
    assert.ok((await readFile(path)).equals(original));
  });

  test('a torn last line: kept in place, copied to a sidecar, then the result', async () => {
    const original = Buffer.from(`${fixture('killed-one-call.jsonl')}{"parentUuid":"x","isSid`);
    const path = join(folder, 'torn.jsonl');
    await writeFile(path, original);
    const outcome = await repairSession(path, { force: true });
    assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
    const after = await readFile(path);
    assert.ok(after.subarray(0, original.length).equals(original));
    const tail = after.subarray(original.length).toString('utf8');
    assert.ok(tail.startsWith('\n{"parentUuid":'), tail);
    assert.equal((await repairSession(path, { force: true })).status, 'clean');
  });
});
