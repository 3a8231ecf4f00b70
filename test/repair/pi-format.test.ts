import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ForeignLine, PlanContext, RepairPlan } from '../../src/repair/foreign-format.ts';
import { claudeCodeFormat } from '../../src/repair/claude-code-format.ts';
import { piFormat } from '../../src/repair/pi-format.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';
import { mutationRounds } from './support/mutations.ts';

/*
 * The pi session format (src/repair/pi-format.ts) on sessions the real client wrote
 * (test/fixtures/foreign/pi/, see its README): pi 0.73.1 killed mid-tool with one and with two
 * calls in flight, a session that ran to its end (pi's own error results), a turn whose stream
 * broke off (stopReason "error"), and the head of a version-1 session pi wrote in 2025 (from
 * pi-mono's test fixtures). Then the same files mutated every way we could think of: never a
 * throw, never a plan that is not pi's own shape.
 */

const FIXTURES = new URL('../fixtures/foreign/pi/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');

const NOW = new Date('2026-12-04T10:00:00.123Z');
/** Deterministic "random" bytes: 0x0a0b0c0d, then 0x0a0b0c0e, … */
function counterBytes(start = 0x0a0b0c0d): PlanContext['randomBytes'] {
  let next = start;
  return (count) => {
    const bytes = new Uint8Array(count);
    let value = next;
    for (let index = count - 1; index >= 0; index -= 1) {
      bytes[index] = value & 0xff;
      value = Math.floor(value / 256);
    }
    next += 1;
    return bytes;
  };
}
const context = (randomBytes = counterBytes()): PlanContext => ({ now: NOW, randomBytes });

/** The file as repair-session reads it: split on `\n` only, a torn last line left out. */
/** The lines repair reads from a session's text (the shell's own splitting). */
const linesOf = (text: string): ForeignLine[] => [...sessionLines(Buffer.from(text)).lines];

function plan(text: string, randomBytes?: PlanContext['randomBytes']): RepairPlan {
  return piFormat.plan(linesOf(text), context(randomBytes));
}

function repaired(result: RepairPlan): Extract<RepairPlan, { kind: 'repair' }> {
  assert.equal(result.kind, 'repair', JSON.stringify(result));
  return result as Extract<RepairPlan, { kind: 'repair' }>;
}

const parse = (line: string) => JSON.parse(line) as Record<string, unknown>;
const lastLine = (text: string) => parse(text.trimEnd().split('\n').at(-1) as string);

describe('detect', () => {
  test('recognises every session the client wrote, with its version', () => {
    for (const [name, version] of [
      ['crash-one-call.v3.jsonl', 'session v3'],
      ['crash-two-calls.v3.jsonl', 'session v3'],
      ['complete.v3.jsonl', 'session v3'],
      ['stream-error.v3.jsonl', 'session v3'],
      ['pi-mono-large-session.head-6.v1.jsonl', 'session v1'],
    ]) {
      const lines = linesOf(fixture(name as string));
      const { session, ...detected } = piFormat.detect(lines) ?? {};
      assert.deepEqual(detected, { format: 'pi', version, supported: true });
      // The session's id and folder, for liveness: the header's.
      const header = lines[0]?.value as { id: string; cwd: string };
      assert.deepEqual(session, { id: header.id, cwd: header.cwd }, name);
    }
  });

  test('a version-2 header is supported; an explicit version 1 too', () => {
    const v3 = fixture('crash-one-call.v3.jsonl');
    assert.equal(
      piFormat.detect(linesOf(v3.replace('"version":3', '"version":2')))?.version,
      'session v2',
    );
    assert.equal(
      piFormat.detect(linesOf(v3.replace('"version":3', '"version":1')))?.version,
      'session v1',
    );
  });

  test('an untested version is recognised as pi and refused, naming it', () => {
    const v3 = fixture('crash-one-call.v3.jsonl');
    for (const version of ['4', '"3"', '2.5', 'null', '{"a":1}', '"\\u001b[2J"']) {
      const detection = piFormat.detect(linesOf(v3.replace('"version":3', `"version":${version}`)));
      assert.equal(detection?.format, 'pi');
      assert.equal(detection?.supported, false, version);
      assert.match(detection?.reason ?? '', /versions 1 \(no version\), 2 and 3/);
      assert.equal(detection?.version.includes('\u001b'), false);
    }
  });

  test('other files are not pi sessions', () => {
    for (const text of [
      '',
      'not json\n{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n',
      '{"type":"user","uuid":"u","message":{"role":"user","content":"hi"}}\n',
      '{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n',
      '{"type":"session","id":"s1"}\n', // no timestamp, no cwd: not a header pi writes
      '{"type":"session","version":2,"id":"x","createdAt":"t","cwd":"/"}\n', // another tool
      '{"type":"session","version":3,"id":42,"timestamp":"t","cwd":"/"}\n',
      '[{"type":"session"}]\n',
      'null\n',
    ]) {
      assert.equal(piFormat.detect(linesOf(text)), null, text);
    }
  });
});

describe('plan on sessions the client wrote', () => {
  test('one call cut off: one toolResult entry, in the shape pi writes for a failed tool', () => {
    const text = fixture('crash-one-call.v3.jsonl');
    const result = repaired(plan(text));
    assert.deepEqual(result.calls, [
      { callId: 'call_crash_one_call_1', toolName: 'bash', line: 5 },
    ]);
    assert.equal(result.append.length, 1);
    const entry = parse(result.append[0] as string);
    assert.deepEqual(entry, {
      type: 'message',
      id: '0a0b0c0d',
      parentId: lastLine(text).id,
      timestamp: '2026-12-04T10:00:00.123Z',
      message: {
        role: 'toolResult',
        toolCallId: 'call_crash_one_call_1',
        toolName: 'bash',
        content: [{ type: 'text', text: INTERRUPTED_MESSAGE }],
        details: {},
        isError: true,
        timestamp: NOW.getTime(),
      },
    });
    // pi's own result entry for a failed tool (complete.v3.jsonl line 8): same keys, same order.
    const own = parse(fixture('complete.v3.jsonl').split('\n')[7] as string);
    assert.equal((own.message as Record<string, unknown>).isError, true);
    assert.deepEqual(Object.keys(entry), Object.keys(own));
    assert.deepEqual(Object.keys(entry.message as object), Object.keys(own.message as object));
  });

  test('two parallel calls cut off: two entries, chained from the last entry, fresh ids', () => {
    const text = fixture('crash-two-calls.v3.jsonl');
    const result = repaired(plan(text));
    assert.deepEqual(
      result.calls.map((call) => call.callId),
      ['call_crash_two_calls_1', 'call_crash_two_calls_2'],
    );
    const [first, second] = result.append.map(parse);
    const ids = new Set(linesOf(text).map((line) => (line.value as { id?: unknown }).id));
    assert.equal(first?.parentId, lastLine(text).id);
    assert.equal(second?.parentId, first?.id);
    for (const entry of [first, second]) {
      assert.match(String(entry?.id), /^[0-9a-f]{8}$/);
      assert.ok(!ids.has(entry?.id));
    }
    assert.notEqual(first?.id, second?.id);
  });

  test('a session that ran to its end is clean', () => {
    const text = fixture('complete.v3.jsonl');
    const result = plan(text);
    assert.equal(result.kind, 'clean');
    assert.match((result as { detail: string }).detail, /line 10\) calls no tool/);
    // Cut after the two error results (lines 8, 9): the calls of line 7 all have one.
    const answered = plan(`${text.split('\n').slice(0, 9).join('\n')}\n`);
    assert.equal(answered.kind, 'clean');
    assert.match(
      (answered as { detail: string }).detail,
      /every tool call .*line 7\) has a result/,
    );
  });

  test('a turn whose stream broke off (stopReason error) is clean: pi drops it itself', () => {
    const result = plan(fixture('stream-error.v3.jsonl'));
    assert.equal(result.kind, 'clean');
    assert.match((result as { detail: string }).detail, /stopReason "error": pi drops it/);
    const aborted = fixture('stream-error.v3.jsonl').replace(
      '"stopReason":"error"',
      '"stopReason":"aborted"',
    );
    assert.match((plan(aborted) as { detail: string }).detail, /stopReason "aborted"/);
  });

  test('version 1 (pi 2025, no entry ids): entries without id or parentId, in v1 key order', () => {
    const text = fixture('pi-mono-large-session.head-6.v1.jsonl');
    const result = repaired(plan(text));
    assert.deepEqual(
      result.calls.map((call) => [call.callId, call.toolName, call.line]),
      [
        ['toolu_017qEkVzzPb7b7o4FkgJLF23', 'read', 6],
        ['toolu_01FnVNKzWWm2s2SFJmJttiWh', 'read', 6],
        ['toolu_016aKHTkjrTJcMds3wsEou2R', 'bash', 6],
      ],
    );
    for (const line of result.append) {
      const entry = parse(line);
      assert.deepEqual(Object.keys(entry), ['type', 'timestamp', 'message']);
      assert.deepEqual(Object.keys(entry), Object.keys(lastLine(text)));
      assert.equal((entry.message as Record<string, unknown>).isError, true);
    }
  });

  test('version 1 with one of three results written: the other two are answered', () => {
    const text = fixture('pi-mono-large-session.head-6.v1.jsonl');
    const ownResult = `{"type":"message","timestamp":"2025-11-20T23:33:54.575Z","message":{"role":"toolResult","toolCallId":"toolu_01FnVNKzWWm2s2SFJmJttiWh","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":1763681630800}}\n`;
    const result = repaired(plan(text + ownResult));
    assert.deepEqual(
      result.calls.map((call) => call.callId),
      ['toolu_017qEkVzzPb7b7o4FkgJLF23', 'toolu_016aKHTkjrTJcMds3wsEou2R'],
    );
  });

  test('version 2: the same shapes as version 3', () => {
    const v3 = fixture('crash-two-calls.v3.jsonl');
    const v2 = v3.replace('"version":3', '"version":2');
    assert.deepEqual(plan(v2), plan(v3));
  });
});

describe('plan on changed sessions', () => {
  const text = fixture('crash-two-calls.v3.jsonl');
  const last = lastLine(text);
  const entry = (fields: Record<string, unknown>) => `${JSON.stringify(fields)}\n`;

  test('one of two results written: only the other is answered, chained after it', () => {
    const result1 = entry({
      type: 'message',
      id: 'aaaaaaaa',
      parentId: last.id,
      timestamp: '2026-12-04T04:38:09.000Z',
      message: {
        role: 'toolResult',
        toolCallId: 'call_crash_two_calls_1',
        toolName: 'bash',
        content: [{ type: 'text', text: 'ok' }],
        isError: false,
        timestamp: 1,
      },
    });
    const result = repaired(plan(text + result1));
    assert.deepEqual(
      result.calls.map((call) => call.callId),
      ['call_crash_two_calls_2'],
    );
    assert.equal(parse(result.append[0] as string).parentId, 'aaaaaaaa');
  });

  test('entries pi does not send (label, custom, unknown types) are passed over', () => {
    const label = entry({ type: 'label', id: 'bbbbbbbb', parentId: last.id, targetId: last.id });
    const custom = entry({ type: 'custom', id: 'cccccccc', parentId: 'bbbbbbbb', data: {} });
    const unknown = entry({ type: 'openclaw_thing', id: 'dddddddd', parentId: 'cccccccc' });
    const result = repaired(plan(`${text}${label}not json at all\n${custom}${unknown}`));
    assert.equal(result.calls.length, 2);
    assert.equal(parse(result.append[0] as string).parentId, 'dddddddd');
  });

  test('the path is the parentId chain: a result on another branch does not count', () => {
    const elsewhere = entry({
      type: 'message',
      id: 'eeeeeeee',
      parentId: 'nothere0', // a parent pi cannot find: a root of its own
      message: { role: 'toolResult', toolCallId: 'call_crash_two_calls_1', toolName: 'bash' },
    });
    const back = entry({ type: 'label', id: 'ffffffff', parentId: last.id });
    const result = repaired(plan(text + elsewhere + back));
    assert.equal(result.calls.length, 2);
    // …and a leaf whose own path has no assistant message: nothing to answer.
    assert.equal(plan(text + back + elsewhere).kind, 'clean');
  });

  test('a user message after the cut-off calls: resumed without a repair, the model told "No result provided"', () => {
    const user = entry({
      type: 'message',
      id: 'abababab',
      parentId: last.id,
      message: { role: 'user', content: [{ type: 'text', text: 'continue' }], timestamp: 1 },
    });
    const result = plan(text + user);
    assert.ok(result.kind === 'resumed', JSON.stringify(result));
    assert.equal(result.told, 'pi told the model "No result provided" for each of them');
    assert.match(result.detail, /went on after them/);
    assert.equal(result.calls.length, 2);
    for (const type of ['custom_message', 'branch_summary', 'compaction']) {
      const between = entry({ type, id: 'cdcdcdcd', parentId: last.id, summary: 's' });
      assert.equal(plan(text + between).kind, 'resumed', type);
    }
  });

  test('a fresh id steps past ids the file already has', () => {
    const taken = `${text}${entry({ type: 'label', id: '0a0b0c0d', parentId: last.id })}${entry({ type: 'label', id: '0a0b0c0e', parentId: '0a0b0c0d' })}`;
    const result = repaired(plan(taken, () => Uint8Array.of(0x0a, 0x0b, 0x0c, 0x0d)));
    assert.deepEqual(
      result.append.map((line) => parse(line).id),
      ['0a0b0c0f', '0a0b0c10'],
    );
  });

  test('shapes pi itself cannot load or pair are refused, never guessed', () => {
    const loop = text.replace(`"parentId":null`, `"parentId":"${String(last.id)}"`);
    assert.match((plan(loop) as { detail: string }).detail, /loops/);
    assert.equal(plan(`${text}42\n`).kind, 'refuse');
    assert.equal(plan(`${text}null\n`).kind, 'refuse');
    const noIdCall = text.replace('"id":"call_crash_two_calls_2",', '');
    assert.equal(plan(noIdCall).kind, 'refuse');
    const stringContent = text.replace(
      /"content":\[\{"type":"text","text":"Running it\."\}.*\],"api"/,
      '"content":"x","api"',
    );
    assert.equal(plan(stringContent).kind, 'refuse');
    const noLeafId = `${text}${JSON.stringify({ type: 'label', parentId: last.id })}\n`;
    assert.equal(plan(noLeafId).kind, 'refuse');
    const badClock = piFormat.plan(linesOf(text), {
      now: new Date(Number.NaN),
      randomBytes: counterBytes(),
    });
    assert.equal(badClock.kind, 'refuse');
  });

  test('a header alone, or no assistant yet, is clean', () => {
    const header = `${text.split('\n')[0]}\n`;
    assert.equal(plan(header).kind, 'clean');
    assert.equal(plan(`${text.split('\n').slice(0, 4).join('\n')}\n`).kind, 'clean');
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
    { type: 'toolCall' },
    { type: 'toolCall', id: 'call_x', name: 'bash' },
    'session',
    'message',
    'assistant',
    'toolResult',
    'toolUse',
    'aborted',
  ];

  const KEYS = ['id', 'parentId', 'type', 'message', 'role', 'content'];

  const names = [
    'crash-one-call.v3.jsonl',
    'crash-two-calls.v3.jsonl',
    'complete.v3.jsonl',
    'stream-error.v3.jsonl',
    'pi-mono-large-session.head-6.v1.jsonl',
  ];

  test('3000 mutations of the client-written sessions: a plan of pi shapes, or a reason', () => {
    mutationRounds({
      format: piFormat,
      sessions: names.map((name) => fixture(name)),
      next: seededRandom(testSeed('pi mutations')),
      odd,
      keys: KEYS,
      context,
      checkRepair(result, _parsed, detection) {
        const v1 = detection.version === 'session v1';
        for (const [index, line] of result.append.entries()) {
          const entry = parse(line);
          const message = entry.message as Record<string, unknown>;
          assert.equal(entry.type, 'message');
          assert.equal(message.role, 'toolResult');
          assert.equal(message.isError, true);
          assert.equal(message.toolCallId, result.calls[index]?.callId);
          assert.equal(typeof message.toolName, 'string');
          assert.deepEqual(message.content, [{ type: 'text', text: INTERRUPTED_MESSAGE }]);
          if (v1) assert.equal('id' in entry, false);
          else assert.match(String(entry.id), /^[0-9a-f]{8}$/);
        }
      },
    });
  });
});

describe('repairSession on a copy of a client-written session', () => {
  let folder: string;
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'llm-agent-pi-format-'));
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  for (const name of ['crash-two-calls.v3.jsonl', 'pi-mono-large-session.head-6.v1.jsonl']) {
    test(`${name}: append-only, backup byte-exact, a second repair is clean`, async () => {
      const original = await readFile(new URL(name, FIXTURES));
      const path = join(folder, name);
      await writeFile(path, original);
      const old = new Date(Date.now() - 60_000);
      await utimes(path, old, old);
      const outcome = await repairSession(path);
      assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
      if (outcome.status !== 'repaired') return;
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

  test("a pi or Codex session holding one line in Claude Code's envelope is refused as mixed, nothing written", async () => {
    const claudeLine = fixture('../claude-code/killed-one-call.jsonl')
      .split('\n')
      .find((line) => line.includes('"type":"user"')) as string;
    for (const [name, text] of [
      ['pi', fixture('crash-one-call.v3.jsonl')],
      ['codex', fixture('../codex/killed-one-call.jsonl')],
    ] as const) {
      const mixed = `${text}${claudeLine}\n`;
      // The fault: Claude Code's detector alone takes the file for its own.
      assert.equal(claudeCodeFormat.detect(linesOf(mixed))?.format, 'claude-code', name);
      const path = join(folder, `mixed-${name}.jsonl`);
      await writeFile(path, mixed);
      const old = new Date(Date.now() - 60_000);
      await utimes(path, old, old);
      const outcome = await repairSession(path);
      assert.ok(outcome.status === 'refused', JSON.stringify(outcome));
      assert.equal(outcome.reason, 'mixed-format', name);
      assert.match(
        outcome.detail,
        new RegExp(`read both as a claude-code 2\\.1\\.197 and as a ${name} `),
      );
      assert.equal(await readFile(path, 'utf8'), mixed, `${name}: nothing written`);
    }
  });

  test('a torn last line: kept in place, copied to a sidecar, then the results', async () => {
    const original = Buffer.from(`${fixture('crash-one-call.v3.jsonl')}{"type":"mess`);
    const path = join(folder, 'torn.jsonl');
    await writeFile(path, original);
    const outcome = await repairSession(path, { force: true });
    assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
    const after = await readFile(path);
    assert.ok(after.subarray(0, original.length).equals(original));
    const tail = after.subarray(original.length).toString('utf8');
    assert.ok(tail.startsWith('\n{"type":"message"'), tail);
    assert.equal((await repairSession(path, { force: true })).status, 'clean');
  });
});
