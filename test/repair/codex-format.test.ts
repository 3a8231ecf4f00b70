import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { codexFormat } from '../../src/repair/codex-format.ts';
import type { ForeignLine, PlanContext, RepairPlan } from '../../src/repair/foreign-format.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { randomBytesFrom, seededRandom, testSeed } from '../support/seeded-random.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';

/*
 * The Codex rollout format (src/repair/codex-format.ts) on rollouts the real client wrote
 * (test/fixtures/foreign/codex/, README there): what it recognises, what it appends and that the
 * appended lines have the shapes Codex itself writes when a turn is interrupted, that a second
 * plan finds nothing to do, and that no file — cut anywhere, or damaged — makes it throw.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/foreign/codex/', import.meta.url));
const NOW = new Date('2026-12-05T10:00:00.123Z');

/** Deterministic "random" bytes: 0x11, 0x12, … */
function context(now = NOW): PlanContext {
  let next = 0x11;
  return {
    now,
    randomBytes: (count) => Uint8Array.from({ length: count }, () => next++ & 0xff),
  };
}

/** Split as the repair shell does: on `\n` only, a last line without its newline left out. */
/** The lines repair reads from a session's text (the shell's own splitting). */
const linesOf = (text: string): ForeignLine[] => [...sessionLines(Buffer.from(text)).lines];

const fixtures = new Map<string, string>();
const FILES = [
  'killed-one-call.jsonl',
  'killed-two-calls.jsonl',
  'killed-after-apply-patch.jsonl',
  'interrupted.jsonl',
  'agent-sessions-small.jsonl',
];
/** SHA-256 of each frozen fixture: a changed or regenerated one fails here. */
const SHA256: Record<string, string> = {
  'agent-sessions-small.jsonl': 'd3570ec041cd69a62a6c81854b62f5f8c35b93589f14671ad0fff1b406648782',
  'interrupted.jsonl': '1d9dc7e19e747cb93d7476edc80ad0dee062e7c5501506b77ba2a5ddb220ada8',
  'killed-after-apply-patch.jsonl':
    'c25c612cd2da58dcfeaa147f0dca5fa7a8179691d3fc6a1d5cdc1e2162a7450d',
  'killed-one-call.jsonl': 'f5001c0aecd1ffbc64fff6dc7d1e70848b00811592dc0fd7aa40cf7fecaf6554',
  'killed-two-calls.jsonl': '5a9bb595f731b08ccefb204ae65daccf43f557baff353d5a4bbfca8c61a02c18',
};
const fixture = (name: string) => fixtures.get(name) as string;

let folder: string;
before(async () => {
  for (const name of FILES) {
    const bytes = await readFile(join(FIXTURES, name));
    assert.equal(createHash('sha256').update(bytes).digest('hex'), SHA256[name], name);
    fixtures.set(name, bytes.toString('utf8'));
  }
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-codex-format-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

type Json = Record<string, unknown>;
const parse = (line: string) => JSON.parse(line) as Json;
const payloadOf = (line: string) => parse(line).payload as Json;

/** The plan, asserted to be a repair. */
function repairOf(plan: RepairPlan): Extract<RepairPlan, { kind: 'repair' }> {
  assert.equal(plan.kind, 'repair', JSON.stringify(plan));
  return plan as Extract<RepairPlan, { kind: 'repair' }>;
}

/** The text with the plan's lines appended, as the shell appends them. */
function appended(text: string, plan: Extract<RepairPlan, { kind: 'repair' }>): string {
  return text + plan.append.map((line) => `${line}\n`).join('');
}

/** Replace the first line's payload fields (a rollout another version might have written). */
function withMeta(text: string, fields: Json): string {
  const [first, ...rest] = text.split('\n');
  const line = parse(first as string);
  line.payload = { ...(line.payload as Json), ...fields };
  return [JSON.stringify(line), ...rest].join('\n');
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('codexFormat.detect', () => {
  test('the rollouts Codex 0.171.0 wrote are supported', () => {
    for (const name of FILES.filter((file) => !file.startsWith('agent-sessions'))) {
      const lines = linesOf(fixture(name));
      const { session, ...detected } = codexFormat.detect(lines) ?? {};
      assert.deepEqual(detected, { format: 'codex', version: '0.171.0', supported: true }, name);
      // The session's id and folder, for liveness: session_meta's.
      const meta = (lines[0] as { value: { payload: { id: string; cwd: string } } }).value.payload;
      assert.deepEqual(session, { id: meta.id, cwd: meta.cwd }, name);
    }
  });

  test('another version is recognised but not supported, naming the version', () => {
    const third = codexFormat.detect(linesOf(fixture('agent-sessions-small.jsonl')));
    assert.equal(third?.format, 'codex');
    assert.equal(third?.version, '0.146.0');
    assert.equal(third?.supported, false);
    assert.match(third?.reason ?? '', /history_mode "default"/);
    for (const version of ['0.145.0', '0.171.0-alpha.1', '0.171']) {
      const detected = codexFormat.detect(
        linesOf(withMeta(fixture('killed-one-call.jsonl'), { cli_version: version })),
      );
      assert.equal(detected?.supported, false, version);
      assert.equal(detected?.version, version);
      assert.match(detected?.reason ?? '', /0\.146\.0 to 0\.171\.0/);
    }
    for (const version of ['0.171.3', '0.172.0', '1.171.0']) {
      const detected = codexFormat.detect(
        linesOf(withMeta(fixture('killed-one-call.jsonl'), { cli_version: version })),
      );
      assert.equal(detected?.supported, false, version);
      assert.equal(detected?.newerThan, '0.171.0', version);
    }
    for (const version of ['0.146.0', '0.170.9', '0.171.0']) {
      const detected = codexFormat.detect(
        linesOf(withMeta(fixture('killed-one-call.jsonl'), { cli_version: version })),
      );
      assert.equal(detected?.supported, true, version);
    }
    const none = codexFormat.detect(
      linesOf(withMeta(fixture('killed-one-call.jsonl'), { cli_version: 171 })),
    );
    assert.deepEqual(
      [none?.version, none?.supported],
      ['unknown', false],
      'a cli_version that is not a string',
    );
    const hostile = codexFormat.detect(
      linesOf(withMeta(fixture('killed-one-call.jsonl'), { cli_version: '\u001b[2J0.171.0' })),
    );
    assert.equal(hostile?.supported, false);
    assert.ok(!hostile?.version.includes('\u001b'), 'control characters are escaped');
  });

  test('an unknown history_mode is refused; legacy, paginated and none are known', () => {
    const text = fixture('killed-one-call.jsonl');
    for (const mode of ['legacy', 'paginated', undefined]) {
      assert.equal(
        codexFormat.detect(linesOf(withMeta(text, { history_mode: mode })))?.supported,
        true,
        String(mode),
      );
    }
    for (const mode of ['default', 'rolling', 7, null]) {
      const detected = codexFormat.detect(linesOf(withMeta(text, { history_mode: mode })));
      assert.equal(detected?.supported, false, String(mode));
      assert.match(detected?.reason ?? '', /history_mode/);
    }
  });

  test('the pre-envelope format and a rollout without session_meta are refused', () => {
    const old = [
      '{"id":"0f6a","timestamp":"2025-04-01T10:00:00Z","instructions":null,"git":{"branch":"main"}}',
      '{"record_type":"state"}',
      '{"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"}',
      '',
    ].join('\n');
    const detected = codexFormat.detect(linesOf(old));
    assert.equal(detected?.format, 'codex');
    assert.equal(detected?.supported, false);
    assert.match(detected?.version ?? '', /pre-envelope/);
    const headless = fixture('killed-one-call.jsonl').split('\n').slice(1).join('\n');
    const missing = codexFormat.detect(linesOf(headless));
    assert.deepEqual([missing?.version, missing?.supported], ['unknown', false]);
    assert.match(missing?.reason ?? '', /session_meta/);
  });

  test('other files are not Codex rollouts', () => {
    for (const text of [
      '',
      '\n',
      'not json\n',
      '[1,2]\n',
      '{"type":"session","version":3,"id":"a","timestamp":"t","cwd":"/"}\n',
      '{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"t","message":{"role":"user","content":"hi"}}\n',
      '{"timestamp":"t","type":"something_else","payload":{}}\n',
      '{"type":"session_meta"}\n',
    ]) {
      assert.equal(codexFormat.detect(linesOf(text)), null, text);
    }
  });
});

describe('codexFormat.plan on rollouts the real client wrote', () => {
  test('one call cut off: its output, the <turn_aborted> marker and the event, in order', () => {
    const text = fixture('killed-one-call.jsonl');
    const plan = repairOf(codexFormat.plan(linesOf(text), context()));
    assert.deepEqual(plan.calls, [{ callId: 'call_sleep', toolName: 'exec_command', line: 10 }]);
    assert.equal(plan.append.length, 3);
    const [output, marker, event] = plan.append.map(parse) as [Json, Json, Json];
    const turnId = (payloadOf(text.split('\n')[1] as string) as Json).turn_id;
    assert.equal(typeof turnId, 'string');

    assert.deepEqual(Object.keys(output), ['timestamp', 'ordinal', 'type', 'payload', 'metadata']);
    assert.equal(output.timestamp, '2026-12-05T10:00:00.123Z');
    assert.equal(output.ordinal, 11);
    assert.equal(output.type, 'response_item');
    const outputPayload = output.payload as Json;
    assert.equal(outputPayload.type, 'function_call_output');
    assert.equal(outputPayload.call_id, 'call_sleep');
    assert.equal(outputPayload.output, INTERRUPTED_MESSAGE);
    assert.match(String(outputPayload.id), /^fco_/);
    assert.match(String(outputPayload.id).slice(4), UUID_V7);
    assert.deepEqual(outputPayload.internal_chat_message_metadata_passthrough, {
      turn_id: turnId,
      create_time: NOW.getTime() / 1000,
    });
    assert.deepEqual(output.metadata, {
      history_sequence: 5,
      sampled_through_sequence: 3,
      client_authored: false,
      model_search_state: 'unused',
    });

    assert.equal(marker.ordinal, 12);
    const markerPayload = marker.payload as Json;
    assert.equal(markerPayload.type, 'message');
    assert.equal(markerPayload.role, 'user');
    const text0 = (markerPayload.content as Json[])[0] as Json;
    assert.equal(text0.type, 'input_text');
    assert.match(String(text0.text), /^<turn_aborted>\n[\s\S]*\n<\/turn_aborted>$/);
    assert.match(String(text0.text), /the Codex process stopped/);
    assert.match(String(text0.text), /NOT been retried/);
    assert.ok(!String(text0.text).includes('on purpose'), 'not "the user interrupted on purpose"');
    assert.equal((marker.metadata as Json).history_sequence, 6);

    assert.deepEqual(event, {
      timestamp: '2026-12-05T10:00:00.123Z',
      ordinal: 13,
      type: 'event_msg',
      payload: {
        type: 'turn_aborted',
        root_turn_id: turnId,
        turn_id: turnId,
        reason: 'interrupted',
      },
    });
  });

  test('the appended lines have the shapes Codex 0.171 writes when a turn is interrupted', () => {
    // interrupted.jsonl: Codex interrupted by SIGINT while the same command ran. Lines 12, 14, 15
    // are its own output, <turn_aborted> message and turn_aborted event.
    const own = fixture('interrupted.jsonl').split('\n');
    const codexOutput = parse(own[11] as string);
    const codexMarker = parse(own[13] as string);
    const codexEvent = parse(own[14] as string);
    assert.equal((codexOutput.payload as Json).type, 'function_call_output');
    assert.match(String((codexOutput.payload as Json).output), /aborted by user/);
    assert.equal((codexEvent.payload as Json).type, 'turn_aborted');

    const plan = repairOf(codexFormat.plan(linesOf(fixture('killed-one-call.jsonl')), context()));
    const [output, marker, event] = plan.append.map(parse) as [Json, Json, Json];
    const keys = (value: unknown) => Object.keys(value as Json).sort();
    // Envelopes and payloads: the same fields.
    for (const [ours, theirs] of [
      [output, codexOutput],
      [marker, codexMarker],
    ] as const) {
      assert.deepEqual(keys(ours), keys(theirs));
      assert.deepEqual(keys(ours.payload), keys(theirs.payload));
      const passthrough = 'internal_chat_message_metadata_passthrough';
      assert.deepEqual(
        keys((ours.payload as Json)[passthrough]),
        keys((theirs.payload as Json)[passthrough]),
      );
      // Our metadata: a subset of Codex's (its output also carries a truncation limit).
      for (const key of keys(ours.metadata)) assert.ok(key in (theirs.metadata as Json), key);
    }
    assert.deepEqual(
      (marker.payload as Json).internal_chat_message_metadata_passthrough,
      {
        ...((codexMarker.payload as Json).internal_chat_message_metadata_passthrough as Json),
        turn_id: ((output.payload as Json).internal_chat_message_metadata_passthrough as Json)
          .turn_id,
        create_time: NOW.getTime() / 1000,
      },
      'the marker is tagged as Codex tags its own (generic.turn_aborted, harness provenance)',
    );
    assert.equal(String((codexMarker.payload as Json).id).length, 40, 'msg_ + a UUID');
    assert.equal(String((marker.payload as Json).id).length, 40);
    assert.equal(String((codexOutput.payload as Json).id).length, 40, 'fco_ + a UUID');
    // The event: what Codex writes, without the turn's start, end and duration (unknown).
    const codexEventPayload = codexEvent.payload as Json;
    const ours = event.payload as Json;
    assert.deepEqual(keys(ours), ['reason', 'root_turn_id', 'turn_id', 'type']);
    for (const key of keys(ours)) assert.ok(key in codexEventPayload, key);
    assert.equal(ours.reason, codexEventPayload.reason);
  });

  test('two parallel calls cut off: both answered, in call order, ordinals running on', () => {
    const plan = repairOf(codexFormat.plan(linesOf(fixture('killed-two-calls.jsonl')), context()));
    assert.deepEqual(
      plan.calls.map((call) => [call.callId, call.line]),
      [
        ['call_sleep_a', 10],
        ['call_sleep_b', 11],
      ],
    );
    assert.deepEqual(
      plan.append.map((line) => parse(line).ordinal),
      [12, 13, 14, 15],
    );
    assert.deepEqual(
      plan.append.slice(0, 2).map((line) => [payloadOf(line).call_id, payloadOf(line).output]),
      [
        ['call_sleep_a', INTERRUPTED_MESSAGE],
        ['call_sleep_b', INTERRUPTED_MESSAGE],
      ],
    );
    const ids = new Set(plan.append.slice(0, 3).map((line) => payloadOf(line).id));
    assert.equal(ids.size, 3, 'fresh ids');
  });

  test('a custom tool call (apply_patch) is answered with a custom_tool_call_output', () => {
    const text = fixture('killed-after-apply-patch.jsonl');
    // As written: apply_patch finished (its output is there), the shell call was cut off.
    const plan = repairOf(codexFormat.plan(linesOf(text), context()));
    assert.deepEqual(
      plan.calls.map((call) => call.callId),
      ['call_sleep'],
    );
    // Cut before apply_patch's output (a crash a moment earlier): both need one, each its kind.
    const earlier = text.split('\n').slice(0, 13).join('\n').concat('\n');
    const both = repairOf(codexFormat.plan(linesOf(earlier), context()));
    assert.deepEqual(
      both.calls.map((call) => [call.callId, call.toolName]),
      [
        ['call_patch', 'apply_patch'],
        ['call_sleep', 'exec_command'],
      ],
    );
    const custom = payloadOf(both.append[0] as string);
    assert.equal(custom.type, 'custom_tool_call_output');
    assert.equal(custom.call_id, 'call_patch');
    assert.equal(custom.output, INTERRUPTED_MESSAGE);
    assert.match(String(custom.id), /^ctco_/);
    // The shape Codex wrote for apply_patch's real output.
    const real = payloadOf(text.split('\n')[13] as string);
    assert.deepEqual(Object.keys(custom).sort(), Object.keys(real).sort());
    assert.equal(payloadOf(both.append[1] as string).type, 'function_call_output');
  });

  test('an interrupted turn (Codex answered the call itself) needs nothing', () => {
    const plan = codexFormat.plan(linesOf(fixture('interrupted.jsonl')), context());
    assert.equal(plan.kind, 'clean');
  });

  test('a second plan after the repair is clean, and ordinals have no gap', () => {
    for (const name of [
      'killed-one-call.jsonl',
      'killed-two-calls.jsonl',
      'killed-after-apply-patch.jsonl',
    ]) {
      const text = fixture(name);
      const repaired = appended(text, repairOf(codexFormat.plan(linesOf(text), context())));
      assert.equal(codexFormat.plan(linesOf(repaired), context()).kind, 'clean', name);
      const ordinals = linesOf(repaired).map((line) => (line.value as Json).ordinal);
      assert.deepEqual(
        ordinals,
        ordinals.map((_, index) => index),
        name,
      );
    }
  });

  test('every prefix of every real rollout: never throws; a repair is then clean', () => {
    for (const name of FILES) {
      // The other project's sample as if 0.171 had written it: its odd lines go through plan.
      const text = name.startsWith('agent-sessions')
        ? withMeta(fixture(name), { cli_version: '0.171.0', history_mode: 'paginated' })
        : fixture(name);
      const lines = text.split('\n');
      for (let cut = 0; cut <= lines.length; cut += 1) {
        const prefix = lines.slice(0, cut).join('\n') + (cut > 0 ? '\n' : '');
        const detected = codexFormat.detect(linesOf(prefix));
        if (detected?.supported !== true) continue;
        const plan = codexFormat.plan(linesOf(prefix), context());
        assert.ok(
          ['clean', 'repair', 'refuse', 'resumed'].includes(plan.kind),
          `${name} cut ${cut}`,
        );
        assert.doesNotMatch(JSON.stringify(plan), /could not plan a repair/, `${name} cut ${cut}`);
        if (plan.kind !== 'repair') continue;
        const again = codexFormat.plan(linesOf(appended(prefix, plan)), context());
        assert.equal(again.kind, 'clean', `${name} cut ${cut}: ${JSON.stringify(again)}`);
      }
    }
  });
});

describe('codexFormat.plan on shapes the fixtures do not show', () => {
  const base = () => fixture('killed-one-call.jsonl');
  const line = (ordinal: number, type: string, payload: Json) =>
    `${JSON.stringify({ timestamp: '2026-12-04T04:44:12.000Z', ordinal, type, payload })}\n`;

  test('the session went on after a cut-off call: resumed without a repair, the model told "aborted"', () => {
    const resumed = base() + line(11, 'event_msg', { type: 'task_started', turn_id: 'turn-2' });
    const plan = codexFormat.plan(linesOf(resumed), context());
    assert.ok(plan.kind === 'resumed', JSON.stringify(plan));
    assert.match(plan.detail, /went on after them \(line 12/);
    assert.equal(plan.told, 'Codex told the model "aborted" for each of them');
    assert.deepEqual(
      plan.calls.map((call) => call.line),
      [10],
    );
    const user = line(11, 'response_item', {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'hello again' }],
    });
    assert.equal(codexFormat.plan(linesOf(base() + user), context()).kind, 'resumed');
  });

  test('calls before the last compaction are not sent any more: clean; only a compaction that happened is spoken of', () => {
    const compacted =
      base() + line(11, 'compacted', { message: 'summary', replacement_history: [] });
    const plan = codexFormat.plan(linesOf(compacted), context());
    assert.deepEqual(plan, {
      kind: 'clean',
      detail: 'no tool call since the last compaction: nothing to answer',
    });
    const whole = fixture('interrupted.jsonl');
    assert.ok(!whole.includes('"type":"compacted"'));
    const clean = codexFormat.plan(linesOf(whole), context());
    assert.equal(clean.kind, 'clean');
    assert.doesNotMatch((clean as { detail: string }).detail, /compaction/);
  });

  test('a compaction in the middle of the turn: the turn is still the one that started', () => {
    const lines = base().split('\n');
    const turnId = payloadOf(lines[1] as string).turn_id;
    const compaction = line(9, 'compacted', { message: 'summary', replacement_history: [] });
    const text = [...lines.slice(0, 9), compaction.trimEnd(), ...lines.slice(9)].join('\n');
    const plan = repairOf(codexFormat.plan(linesOf(text), context()));
    assert.deepEqual(
      plan.calls.map((call) => call.callId),
      ['call_sleep'],
    );
    assert.equal(payloadOf(plan.append.at(-1) as string).turn_id, turnId);
  });

  test('tool search, local shell and server-side calls', () => {
    const search = line(11, 'response_item', {
      type: 'tool_search_call',
      call_id: 'ts_1',
      status: 'completed',
      execution: 'client',
      arguments: { query: 'deploy' },
    });
    const plan = repairOf(codexFormat.plan(linesOf(base() + search), context()));
    assert.deepEqual(
      plan.calls.map((call) => [call.callId, call.toolName]),
      [
        ['call_sleep', 'exec_command'],
        ['ts_1', 'tool_search'],
      ],
    );
    assert.deepEqual(
      {
        ...payloadOf(plan.append[1] as string),
        internal_chat_message_metadata_passthrough: undefined,
      },
      {
        type: 'tool_search_output',
        call_id: 'ts_1',
        status: 'completed',
        execution: 'client',
        tools: [],
        internal_chat_message_metadata_passthrough: undefined,
      },
    );
    const marker = JSON.stringify(payloadOf(plan.append[2] as string));
    assert.match(marker, /tool search that was cut off/);

    const shell = line(11, 'response_item', {
      type: 'local_shell_call',
      call_id: 'ls_1',
      status: 'in_progress',
      action: { type: 'exec', command: ['ls'] },
    });
    const noId = line(12, 'response_item', { type: 'local_shell_call', call_id: null });
    const web = line(13, 'response_item', { type: 'web_search_call', status: 'completed' });
    const mixed = repairOf(codexFormat.plan(linesOf(base() + shell + noId + web), context()));
    assert.deepEqual(
      mixed.calls.map((call) => call.callId),
      ['call_sleep', 'ls_1'],
    );
    assert.equal(payloadOf(mixed.append[1] as string).type, 'function_call_output');
  });

  test('a call of a kind repair does not know, without an output: refused', () => {
    const unknown = line(11, 'response_item', { type: 'shell_call', call_id: 'sc_1' });
    const plan = codexFormat.plan(linesOf(base() + unknown), context());
    assert.equal(plan.kind, 'refuse');
    assert.match((plan as { detail: string }).detail, /"shell_call"/);
    const answered = line(12, 'response_item', { type: 'shell_call_output', call_id: 'sc_1' });
    assert.equal(codexFormat.plan(linesOf(base() + unknown + answered), context()).kind, 'repair');
  });

  test('an output of the wrong kind does not answer a call (Codex matches by kind)', () => {
    const wrong = line(11, 'response_item', {
      type: 'custom_tool_call_output',
      call_id: 'call_sleep',
      output: 'x',
    });
    const plan = repairOf(codexFormat.plan(linesOf(base() + wrong), context()));
    assert.deepEqual(
      plan.calls.map((call) => call.callId),
      ['call_sleep'],
    );
  });

  test('without ordinals and metadata, none are written', () => {
    const bare = base()
      .split('\n')
      .filter((text) => text !== '')
      .map((text) => {
        const { ordinal: _ordinal, metadata: _metadata, ...rest } = parse(text);
        return `${JSON.stringify(rest)}\n`;
      })
      .join('');
    const plan = repairOf(codexFormat.plan(linesOf(bare), context()));
    for (const appendedLine of plan.append) {
      assert.deepEqual(Object.keys(parse(appendedLine)), ['timestamp', 'type', 'payload']);
    }
  });

  test('an invalid clock is refused, not written', () => {
    const plan = codexFormat.plan(linesOf(base()), context(new Date(Number.NaN)));
    assert.equal(plan.kind, 'refuse');
  });
});

describe('codexFormat never throws on damaged or hostile rollouts', () => {
  test('random damage to the real rollouts', () => {
    const random = seededRandom(testSeed('codex-format damage'));
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
    for (let round = 0; round < 300; round += 1) {
      const lines = fixture(pick(FILES)).split('\n');
      const damage = Math.floor(random() * 5);
      const index = Math.floor(random() * lines.length);
      if (damage === 0) {
        const target = lines[index] ?? '';
        const at = Math.floor(random() * (target.length + 1));
        lines[index] = target.slice(0, at) + randomBytesFrom(random, 4).toString('latin1');
      } else if (damage === 1) {
        lines.splice(index, 1);
      } else if (damage === 2) {
        lines.splice(index, 0, lines[Math.floor(random() * lines.length)] ?? '');
      } else if (damage === 3) {
        // Swap a value for one of another type, anywhere in a line.
        const target = lines[index] ?? '';
        lines[index] = target.replace(
          /"(call_id|type|payload|ordinal|turn_id|metadata|role|name)":/,
          (match) => `${match}${pick(['null,', '7,', '[],', '{},', '"x",', 'true,'])}"_was":`,
        );
      } else {
        lines.reverse();
      }
      const text = lines.join('\n');
      assert.doesNotThrow(() => {
        const detected = codexFormat.detect(linesOf(text));
        const plan = codexFormat.plan(linesOf(text), context());
        assert.ok(['clean', 'repair', 'refuse', 'resumed'].includes(plan.kind));
        // The plan's own safety net (a refusal naming an exception) must never be needed.
        assert.doesNotMatch(JSON.stringify(plan), /could not plan a repair/);
        if (detected?.supported === true && plan.kind === 'repair') {
          for (const appendedLine of plan.append) JSON.parse(appendedLine);
        }
      }, `round ${round}`);
    }
  });

  test('hostile strings are carried as data, escaped', () => {
    const hostile = 'call_\u0000\n\u2028"\\}{';
    const text = `${fixture('killed-one-call.jsonl').replaceAll('call_sleep', 'CALLID')}`;
    const damaged = text.replace('"CALLID"', JSON.stringify(hostile));
    const plan = repairOf(codexFormat.plan(linesOf(damaged), context()));
    assert.equal(plan.calls[0]?.callId, hostile);
    assert.equal(payloadOf(plan.append[0] as string).call_id, hostile);
    for (const appendedLine of plan.append) assert.ok(!appendedLine.includes('\n'));
  });

  test('values of the wrong type everywhere', () => {
    const meta = fixture('killed-one-call.jsonl').split('\n')[0] as string;
    for (const payload of [
      null,
      [],
      7,
      'x',
      { type: 'function_call' },
      { type: 'function_call', call_id: 5, name: 'x' },
      { type: 'function_call', call_id: 'c', name: { toString: 1 } },
      { type: 'custom_tool_call', call_id: '', name: 'x' },
      { type: ['function_call'], call_id: 'c' },
    ]) {
      const text = `${meta}\n${JSON.stringify({ timestamp: 't', type: 'response_item', payload })}\n`;
      const plan = codexFormat.plan(linesOf(text), context());
      assert.doesNotMatch(JSON.stringify(plan), /could not plan a repair/, JSON.stringify(payload));
    }
    // Too few random bytes: the ids are still well formed.
    const badRandom: PlanContext = { now: NOW, randomBytes: () => new Uint8Array(0) };
    const plan = repairOf(codexFormat.plan(linesOf(fixture('killed-one-call.jsonl')), badRandom));
    assert.match(String(payloadOf(plan.append[0] as string).id).slice(4), UUID_V7);
  });
});

describe('repairSession on a Codex rollout', () => {
  let counter = 0;
  const OLD = new Date(Date.now() - 60_000);
  async function copy(text: string): Promise<string> {
    const path = join(folder, `rollout-${counter++}.jsonl`);
    await writeFile(path, text);
    await utimes(path, OLD, OLD);
    return path;
  }

  test('append-only, with a byte-exact backup; a second repair is clean', async () => {
    const original = fixture('killed-two-calls.jsonl');
    const path = await copy(original);
    const outcome = await repairSession(path);
    assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
    assert.ok(outcome.status === 'repaired');
    assert.equal(outcome.appended, 4);
    const after = await readFile(path, 'utf8');
    assert.ok(after.startsWith(original), 'the original bytes are a prefix');
    assert.equal(await readFile(outcome.backup, 'utf8'), original);
    await utimes(path, OLD, OLD);
    const again = await repairSession(path);
    assert.equal(again.status, 'clean');
    assert.equal(await readFile(path, 'utf8'), after);
  });

  test('a torn last line stays where it is; the ordinals go on from the whole lines', async () => {
    const original = `${fixture('killed-one-call.jsonl')}{"timestamp":"2026-12-04T04:44:12.1`;
    const path = await copy(original);
    const outcome = await repairSession(path);
    assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
    const after = await readFile(path, 'utf8');
    assert.ok(after.startsWith(`${original}\n`));
    const added = after
      .slice(original.length + 1)
      .split('\n')
      .filter(Boolean);
    assert.deepEqual(
      added.map((text) => parse(text).ordinal),
      [11, 12, 13],
    );
  });

  test('a supported rollout that was just written is refused as live without force', async () => {
    const path = join(folder, `rollout-${counter++}.jsonl`);
    await writeFile(path, fixture('killed-one-call.jsonl'));
    // Quiet for ten minutes to count as left alone: just written is live on any machine.
    const outcome = await repairSession(path, { quietMs: 600_000 });
    assert.equal(outcome.status, 'refused');
    assert.ok(outcome.status === 'refused');
    assert.equal(outcome.reason, 'live');
    assert.match(outcome.detail, /changed \d+ ms ago/);
  });
});
