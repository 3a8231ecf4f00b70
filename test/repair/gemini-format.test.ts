import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { ForeignLine, PlanContext, RepairPlan } from '../../src/repair/foreign-format.ts';
import { GEMINI_INTERRUPTED_TURN, geminiFormat } from '../../src/repair/gemini-format.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import { mutationRounds } from './support/mutations.ts';

/*
 * The Gemini CLI chat format (src/repair/gemini-format.ts) on sessions the real Gemini CLI
 * 0.61.0 wrote (test/fixtures/foreign/gemini-cli/, see its README): killed while one and while
 * two shell calls ran, and a session that ran to its end. Then its loader's rules (the last
 * record for an id wins in place, `$set` of messages, `$rewindTo`), and the files mutated every
 * way we could think of: never a throw, never a plan that is not Gemini CLI's own record.
 */

const FIXTURES = new URL('../fixtures/foreign/gemini-cli/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const context: PlanContext = {
  now: new Date('2026-12-04T10:00:00Z'),
  randomBytes: (n) => new Uint8Array(n),
};
const linesOf = (text: string): ForeignLine[] => [...sessionLines(Buffer.from(text)).lines];
const plan = (text: string): RepairPlan => geminiFormat.plan(linesOf(text), context);
const records = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const withLines = (text: string, ...more: unknown[]) =>
  `${text}${more.map((value) => `${JSON.stringify(value)}\n`).join('')}`;

describe('detect', () => {
  test('the sessions Gemini CLI 0.61.0 wrote are chat jsonl', () => {
    for (const name of ['crash-one-call.jsonl', 'crash-two-calls.jsonl', 'complete.jsonl']) {
      assert.deepEqual(geminiFormat.detect(linesOf(fixture(name))), {
        format: 'gemini-cli',
        version: 'chat jsonl',
        supported: true,
      });
    }
  });

  test('a legacy single-object session and a subagent session are refused, saying why', () => {
    const legacy = geminiFormat.detect(
      linesOf(`${JSON.stringify({ sessionId: 's', projectHash: 'p', messages: [] })}\n`),
    );
    assert.equal(legacy?.supported, false);
    assert.match(legacy?.reason ?? '', /before 0\.58/);
    const sub = geminiFormat.detect(
      linesOf(`${JSON.stringify({ sessionId: 's', projectHash: 'p', kind: 'subagent' })}\n`),
    );
    assert.equal(sub?.supported, false);
  });

  test('other formats are not taken for Gemini CLI', () => {
    assert.equal(
      geminiFormat.detect(linesOf('{"type":"session","id":"x","timestamp":"t","cwd":"/"}\n')),
      null,
    );
    assert.equal(
      geminiFormat.detect(linesOf('{"sessionId":"s","type":"user","uuid":"u"}\n')),
      null,
    );
    assert.equal(geminiFormat.detect(linesOf('')), null);
  });
});

describe('plan', () => {
  for (const name of ['crash-one-call.jsonl', 'crash-two-calls.jsonl']) {
    test(`${name}: the empty model turn appended again, same id, every field kept, our text`, () => {
      const text = fixture(name);
      const all = records(text);
      const turn = all.filter((record) => typeof record.id === 'string').at(-1) as Record<
        string,
        unknown
      >;
      assert.equal(turn.content, '');
      const result = plan(text);
      assert.equal(result.kind, 'repair', JSON.stringify(result));
      if (result.kind !== 'repair') return;
      assert.deepEqual(result.calls, [
        { callId: turn.id, toolName: '(not recorded)', line: all.indexOf(turn) + 1 },
      ]);
      assert.equal(result.append.length, 1);
      assert.deepEqual(JSON.parse(result.append[0] as string), {
        ...turn,
        content: GEMINI_INTERRUPTED_TURN,
      });
      assert.deepEqual(Object.keys(JSON.parse(result.append[0] as string)), Object.keys(turn));
      // Repaired, the session needs nothing.
      assert.equal(plan(withLines(text, JSON.parse(result.append[0] as string))).kind, 'clean');
    });
  }

  test('the text says what is known and nothing more', () => {
    assert.match(GEMINI_INTERRUPTED_TURN, /interrupted/);
    assert.match(GEMINI_INTERRUPTED_TURN, /may have been running a tool/);
    assert.match(GEMINI_INTERRUPTED_TURN, /unknown/);
    assert.match(GEMINI_INTERRUPTED_TURN, /Nothing was retried/);
    assert.match(GEMINI_INTERRUPTED_TURN, /check/);
  });

  test('a session that ran to its end: the empty turn was replaced by its toolCalls record, clean', () => {
    const text = fixture('complete.jsonl');
    const ids = records(text)
      .filter((record) => record.content === '')
      .map((record) => record.id);
    assert.ok(
      ids.length >= 2 && ids[0] === ids[1],
      'the fixture holds the empty record and its replacement',
    );
    assert.deepEqual(plan(text), {
      kind: 'clean',
      detail: 'the last turn was not cut off in a tool',
    });
  });

  test('a turn cut off before a later turn: the session went on, left alone and named', () => {
    const text = withLines(fixture('crash-one-call.jsonl'), {
      id: 'later',
      timestamp: '2026-12-04T10:00:00Z',
      type: 'user',
      content: [{ text: 'go on' }],
    });
    const result = plan(text);
    assert.equal(result.kind, 'clean');
    assert.match(result.kind === 'clean' ? result.detail : '', /went on after it/);
  });

  test('$rewindTo the cut-off turn drops it: nothing to repair', () => {
    const text = fixture('crash-one-call.jsonl');
    const turn = records(text)
      .filter((record) => typeof record.id === 'string')
      .at(-1);
    assert.equal(plan(withLines(text, { $rewindTo: turn?.id })).kind, 'clean');
    // An unknown id drops every message, as Gemini CLI's loader does.
    assert.deepEqual(plan(withLines(text, { $rewindTo: 'nope' })), {
      kind: 'clean',
      detail: 'the session has no turns yet',
    });
  });

  test('$set of messages replaces them all', () => {
    const text = fixture('crash-one-call.jsonl');
    const replaced = withLines(text, {
      $set: { messages: [{ id: 'only', type: 'gemini', content: 'A full answer.' }] },
    });
    assert.equal(plan(replaced).kind, 'clean');
    const emptied = withLines(fixture('complete.jsonl'), {
      $set: { messages: [{ id: 'x', type: 'gemini', content: '' }] },
    });
    assert.equal(plan(emptied).kind, 'repair');
  });

  test('an empty response (content a list) and a turn with text are not taken for a cut-off call', () => {
    const base = fixture('complete.jsonl');
    const empty = withLines(base, { id: 'e', type: 'gemini', content: [] });
    assert.equal(plan(empty).kind, 'clean');
    const spoken = withLines(base, { id: 't', type: 'gemini', content: 'Running it.' });
    assert.equal(plan(spoken).kind, 'clean');
  });

  test('a record or message type the tested versions do not write is refused', () => {
    const base = fixture('crash-one-call.jsonl');
    const odd = plan(withLines(base, { something: 'else' }));
    assert.equal(odd.kind, 'refuse');
    const type = plan(withLines(base, { id: 'z', type: 'tool', content: '' }));
    assert.equal(type.kind, 'refuse');
    assert.match(type.kind === 'refuse' ? type.detail : '', /"tool"/);
  });

  test('3000 mutations of the client-written sessions: a Gemini CLI record, or a reason', () => {
    mutationRounds({
      format: geminiFormat,
      sessions: ['crash-one-call.jsonl', 'crash-two-calls.jsonl', 'complete.jsonl'].map(fixture),
      next: seededRandom(testSeed('gemini mutations')),
      odd: [null, '', 0, -1, 'gemini', 'user', [], {}, { $set: {} }, '\u202e', true],
      keys: ['id', 'type', 'content', 'toolCalls', '$set', '$rewindTo', 'messages', 'sessionId'],
      context: () => context,
      checkRepair(result, parsed) {
        const written = JSON.parse(result.append[0] as string) as Record<string, unknown>;
        assert.equal(written.type, 'gemini');
        assert.equal(written.content, GEMINI_INTERRUPTED_TURN);
        assert.ok(
          parsed.some((line) => line.text.includes(JSON.stringify(written.id))),
          'the record replaces one of the file',
        );
      },
    });
  });
});
