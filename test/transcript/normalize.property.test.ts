import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { conversationView, type ViewMessage } from '../../src/transcript/conversation-view.ts';
import { normalizeConversation } from '../../src/transcript/normalize-conversation.ts';
import {
  type PairingRules,
  type PairingViolation,
  pairingViolations,
} from '../../src/transcript/pairing-violations.ts';
import type {
  ForeignRecord,
  Message,
  RecordBody,
  ToolResultPart,
  TranscriptRecord,
} from '../../src/transcript/records.ts';
import { assistant, call, result, system, tool, user } from './conversation-builders.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);
const parameters = { seed, numRuns: 300 };
const ALL_RULES: PairingRules[] = ['anthropic', 'openai-chat', 'openai-responses'];

// ---------------------------------------------------------------------------------------------
// Legal writer histories: what the Loop, revival and the subagent composer may write.
// ---------------------------------------------------------------------------------------------

type InjectedKind = 'background' | 'revival' | 'user';

interface TurnPlan {
  calls: number;
  /** Sort keys: the order the results are written in. */
  order: number[];
  /** User turns written among the results (after `after` of them). */
  interleave: { after: number; kind: InjectedKind }[];
  /** Which results revival wrote (interrupted answers). */
  byRevival: boolean[];
  text: boolean;
}

interface RoundPlan {
  opener: InjectedKind;
  turns: TurnPlan[];
  /** A compaction written after the round: picks a range of whole units written so far. */
  compaction?: [number, number];
  /** A record of a type from the future, which the view must ignore. */
  foreign: boolean;
}

interface HistoryPlan {
  system: boolean;
  rounds: RoundPlan[];
  /** For the last turn: which calls were never answered (a run's pending state). */
  pending?: boolean[];
  noticeAfterPending: boolean;
}

const turnPlan: fc.Arbitrary<TurnPlan> = fc.record({
  calls: fc.integer({ min: 0, max: 4 }),
  order: fc.array(fc.nat(1000), { minLength: 4, maxLength: 4 }),
  interleave: fc.array(
    fc.record({
      after: fc.nat(4),
      kind: fc.constantFrom<InjectedKind>('background', 'revival', 'user'),
    }),
    { maxLength: 2 },
  ),
  byRevival: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  text: fc.boolean(),
});

const roundPlan: fc.Arbitrary<RoundPlan> = fc.record(
  {
    opener: fc.constantFrom<InjectedKind>('user', 'background', 'revival'),
    turns: fc.array(turnPlan, { minLength: 1, maxLength: 3 }),
    compaction: fc.tuple(fc.nat(), fc.nat()),
    foreign: fc.boolean(),
  },
  { requiredKeys: ['opener', 'turns', 'foreign'] },
);

function historyPlan(withPending: boolean): fc.Arbitrary<HistoryPlan> {
  const pending = fc.array(fc.boolean(), { minLength: 4, maxLength: 4 });
  return fc.record({
    system: fc.boolean(),
    rounds: fc.array(roundPlan, { minLength: 1, maxLength: 6 }),
    noticeAfterPending: fc.boolean(),
    ...(withPending ? { pending } : {}),
  });
}

interface History {
  records: (TranscriptRecord | ForeignRecord)[];
  /** Calls of the last turn left unanswered. */
  pending: string[];
}

function injectedMessage(kind: InjectedKind, text: string): Message {
  return kind === 'user' ? user(text) : user(text, { injected: kind });
}

/** Write a plan out as records, the way the writers would. */
function buildHistory(plan: HistoryPlan): History {
  const written: (TranscriptRecord | ForeignRecord)[] = [];
  const units: [start: number, end: number][] = [];
  let nextCall = 0;
  const write = (body: RecordBody | Message): number => {
    const seq = written.length;
    const full = 'type' in body ? body : { type: 'message' as const, ...body };
    written.push({ v: 1, seq, at: '2026-12-02T08:00:00.000Z', ...full } as TranscriptRecord);
    return seq;
  };
  const unit = (start: number) => units.push([start, written.length - 1]);
  const pending: string[] = [];

  if (plan.system) unit(write(system('You are a test.')));
  plan.rounds.forEach((round, roundIndex) => {
    const finalRound = roundIndex === plan.rounds.length - 1;
    unit(write(injectedMessage(round.opener, `round ${roundIndex}`)));
    round.turns.forEach((turn, turnIndex) => {
      const lastTurn = turnIndex === round.turns.length - 1;
      // A turn that is followed by another in its round asked for tools (else it would end).
      const callCount = lastTurn ? turn.calls : Math.max(1, turn.calls);
      const ids = Array.from({ length: callCount }, () => `call_${nextCall++}`);
      const start = write(
        assistant(...(turn.text ? [`turn ${turnIndex}`] : []), ...ids.map((id) => call(id))),
      );
      const inResultOrder = ids
        .map((id, position) => ({ id, position, key: turn.order[position] ?? 0 }))
        .sort((left, right) => left.key - right.key || left.position - right.position);
      const unanswered = (position: number) =>
        finalRound && lastTurn && plan.pending?.[position] === true;
      const answered = inResultOrder.filter((entry) => !unanswered(entry.position));
      for (const entry of inResultOrder) if (unanswered(entry.position)) pending.push(entry.id);
      const interleaveAt = (done: number) =>
        turn.interleave.filter((item) => item.after % (answered.length + 1) === done);
      answered.forEach((entry, done) => {
        for (const item of interleaveAt(done)) write(injectedMessage(item.kind, 'meanwhile'));
        write({
          type: 'tool-dispatched',
          callId: entry.id,
          toolName: 'lookup',
          inputDigest: 'sha256:00',
          idempotency: 'read-only',
        });
        if (turn.byRevival[entry.position] === true) {
          const interrupted: ToolResultPart = { ...result(entry.id, 'interrupted'), isError: true };
          write({ ...tool(interrupted), extras: { injected: 'revival' } });
          write({
            type: 'tool-settled',
            callId: entry.id,
            status: 'failed',
            reason: 'interrupted',
          });
        } else {
          write(tool(result(entry.id)));
          write({ type: 'tool-settled', callId: entry.id, status: 'completed' });
        }
      });
      for (const item of interleaveAt(answered.length)) {
        write(injectedMessage(item.kind, 'afterwards'));
      }
      unit(start);
    });
    if (round.foreign) {
      const seq = written.length;
      written.push({ v: 1, seq, at: 'x', type: 'from-the-future', unknown: true } as ForeignRecord);
      unit(seq);
    }
    if (!finalRound && round.compaction !== undefined) {
      const [first, span] = round.compaction;
      const from = first % units.length;
      const to = from + (span % (units.length - from));
      const range = [units[from]?.[0] ?? 0, units[to]?.[1] ?? 0];
      unit(
        write({ type: 'compaction', fromSeq: range[0] ?? 0, toSeq: range[1] ?? 0, summary: 'S' }),
      );
    }
  });
  if (plan.pending !== undefined && plan.noticeAfterPending) {
    write(user('resumed', { injected: 'revival' }));
  }
  return { records: written, pending };
}

function unansweredByRules(violations: PairingViolation[]): Record<PairingRules, string[]> {
  const found: Record<PairingRules, string[]> = {
    anthropic: [],
    'openai-chat': [],
    'openai-responses': [],
  };
  for (const violation of violations) found[violation.rules].push(violation.callId ?? '?');
  for (const rules of ALL_RULES) found[rules].sort();
  return found;
}

/**
 * The shape normalization promises, checked independently of how it is reached: every tool
 * message stands right after an assistant turn, holds only answers to that turn's calls, in
 * call order, each once, and is the only tool message of that turn.
 */
function assertNormalForm(view: readonly Message[]): void {
  view.forEach((message, index) => {
    if (message.role !== 'tool') return;
    const turn = view[index - 1];
    assert.equal(turn?.role, 'assistant', `tool message ${index} does not follow its turn`);
    const calls = (turn?.content ?? []).flatMap((part) =>
      part.type === 'tool-call' ? [part.callId] : [],
    );
    const answers = message.content.flatMap((part) =>
      part.type === 'tool-result' ? [part.callId] : [],
    );
    assert.ok(answers.length > 0, `tool message ${index} is empty`);
    assert.deepEqual(
      answers,
      calls.filter((id) => answers.includes(id)),
      `tool message ${index} is not in call order, or answers a call of another turn`,
    );
    assert.equal(new Set(answers).size, answers.length, `tool message ${index} repeats a call`);
  });
}

/**
 * Which records a view must show, in order: messages outside every compaction range, and the
 * summaries of compactions outside every range, each standing where its range began.
 */
function expectedSeqs(records: readonly (TranscriptRecord | ForeignRecord)[]): number[] {
  const ranges: [number, number][] = [];
  for (const record of records) {
    if (record.type === 'compaction' && 'fromSeq' in record && 'toSeq' in record) {
      ranges.push([Number(record.fromSeq), Number(record.toSeq)]);
    }
  }
  const removed = (seq: number) => ranges.some(([from, to]) => from <= seq && seq <= to);
  const place = (record: TranscriptRecord | ForeignRecord) =>
    'fromSeq' in record ? Number(record.fromSeq) : record.seq;
  return records
    .filter((record) => record.type === 'message' || record.type === 'compaction')
    .filter((record) => !removed(record.seq))
    .sort((left, right) => place(left) - place(right) || left.seq - right.seq)
    .map((record) => record.seq);
}

test('the view of a legal history breaks no pairing rule, and normalizing it changes nothing', () => {
  const seen = { compacted: 0, nested: 0, interleaved: 0, byRevival: 0, outOfOrder: 0 };
  fc.assert(
    fc.property(historyPlan(false), (plan) => {
      const { records: written } = buildHistory(plan);
      const view = conversationView(written);
      assert.deepEqual(pairingViolations(view), []);
      assert.deepEqual(normalizeConversation(view), view);
      assertNormalForm(view);
      // Tool messages are merged, so compare the records the view shows, tool messages aside.
      const shown = new Set(view.map((message) => message.seq));
      const expected = expectedSeqs(written).filter((seq) => {
        const record = written[seq];
        return !(record?.type === 'message' && 'role' in record && record.role === 'tool');
      });
      assert.deepEqual(
        view.filter((message) => message.role !== 'tool').map((message) => message.seq),
        expected,
      );
      assert.ok([...shown].every((seq) => expectedSeqs(written).includes(seq)));
      const compactions = written.filter((record) => record.type === 'compaction');
      if (compactions.length > 0) seen.compacted += 1;
      if (compactions.length > view.filter((m) => m.extras?.injected === 'compaction').length) {
        seen.nested += 1;
      }
      if (
        view.some((message) => message.extras?.injected === 'revival' && message.role === 'tool')
      ) {
        seen.byRevival += 1;
      }
      if (plan.rounds.some((round) => round.turns.some((turn) => turn.interleave.length > 0))) {
        seen.interleaved += 1;
      }
      const firstTool = written.findIndex(
        (record) => record.type === 'message' && 'role' in record && record.role === 'tool',
      );
      if (
        firstTool >= 0 &&
        view.some((message) => message.role === 'tool' && message.content.length > 1)
      ) {
        seen.outOfOrder += 1;
      }
    }),
    parameters,
  );
  // The generator must reach the cases the property is about.
  for (const [name, count] of Object.entries(seen)) assert.ok(count > 10, `only ${count} ${name}`);
});

test('a pending tail: exactly its unanswered calls are reported, by every provider', () => {
  let withPending = 0;
  fc.assert(
    fc.property(historyPlan(true), (plan) => {
      const history = buildHistory(plan);
      const view = conversationView(history.records);
      const violations = pairingViolations(view);
      assert.ok(violations.every((violation) => violation.code === 'unanswered-call'));
      const expected = [...history.pending].sort();
      assert.deepEqual(unansweredByRules(violations), {
        anthropic: expected,
        'openai-chat': expected,
        'openai-responses': expected,
      });
      assert.deepEqual(normalizeConversation(view), view);
      assertNormalForm(view);
      if (expected.length > 0) withPending += 1;
    }),
    parameters,
  );
  assert.ok(withPending > 10, `only ${withPending} histories with unanswered calls`);
});

// ---------------------------------------------------------------------------------------------
// Random conversations, legal or not.
// ---------------------------------------------------------------------------------------------

type Step =
  | { kind: 'assistant'; calls: number }
  | { kind: 'tool'; results: { target: 'asked' | 'unknown' | 'later'; pick: number }[] }
  | { kind: 'user' | 'system' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('assistant' as const), calls: fc.integer({ min: 0, max: 4 }) }),
  fc.record({
    kind: fc.constant('tool' as const),
    results: fc.array(
      fc.record({
        target: fc.constantFrom<'asked' | 'unknown' | 'later'>(
          'asked',
          'asked',
          'asked',
          'unknown',
          'later',
        ),
        pick: fc.nat(),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  }),
  fc.record({ kind: fc.constantFrom<'user' | 'system'>('user', 'system') }),
);

/** Messages from steps, and the calls that some later tool message answers. */
function buildConversation(steps: Step[]): { messages: Message[]; unanswered: string[] } {
  const messages: Message[] = [];
  const asked: string[] = [];
  const answered = new Set<string>();
  let ghosts = 0;
  for (const item of steps) {
    if (item.kind === 'assistant') {
      const ids = Array.from({ length: item.calls }, (_, offset) => `c${asked.length + offset}`);
      asked.push(...ids);
      messages.push(assistant(...ids.map((id) => call(id))));
    } else if (item.kind === 'tool') {
      const results = item.results.map(({ target, pick }) => {
        if (target === 'asked' && asked.length > 0) {
          const id = asked[pick % asked.length] ?? 'c0';
          answered.add(id);
          return result(id, `r${pick}`);
        }
        // A call asked later (never answered by this result), or one never asked at all.
        return result(target === 'later' ? `c${asked.length + (pick % 3)}` : `ghost${ghosts++}`);
      });
      messages.push(tool(...results));
    } else {
      messages.push(item.kind === 'user' ? user('hello') : system('note'));
    }
  }
  return { messages, unanswered: asked.filter((id) => !answered.has(id)).sort() };
}

test('normalizing any conversation leaves only its unanswered calls, and is idempotent', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
      const { messages, unanswered } = buildConversation(steps);
      const before = structuredClone(messages);
      const normalized = normalizeConversation(messages);
      assert.deepEqual(messages, before, 'the input is not changed');
      assert.deepEqual(normalizeConversation(normalized), normalized);
      const violations = pairingViolations(normalized);
      assert.deepEqual(
        violations.filter((violation) => violation.code !== 'unanswered-call'),
        [],
      );
      assert.deepEqual(unansweredByRules(violations), {
        anthropic: unanswered,
        'openai-chat': unanswered,
        'openai-responses': unanswered,
      });
      assertNormalForm(normalized);
      // Each answer kept is the first one written after its call.
      for (const message of normalized) {
        if (message.role !== 'tool') continue;
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue;
          const asking = askingIndex(messages, part.callId);
          const first = messages
            .slice(asking + 1)
            .flatMap((later) => (later.role === 'tool' ? later.content : []))
            .find((later) => later.type === 'tool-result' && later.callId === part.callId);
          assert.equal(part, first, `the answer kept for ${part.callId} is not the first`);
        }
      }
    }),
    parameters,
  );
});

// ---------------------------------------------------------------------------------------------
// Breaking a valid view on purpose: the checker must notice.
// ---------------------------------------------------------------------------------------------

interface Located {
  messageIndex: number;
  partIndex: number;
  part: ToolResultPart;
}

function resultsIn(view: readonly Message[]): Located[] {
  const found: Located[] = [];
  view.forEach((message, messageIndex) => {
    if (message.role !== 'tool') return;
    message.content.forEach((part, partIndex) => {
      if (part.type === 'tool-result') found.push({ messageIndex, partIndex, part });
    });
  });
  return found;
}

function askingIndex(view: readonly Message[], callId: string): number {
  return view.findIndex(
    (message) =>
      message.role === 'assistant' &&
      message.content.some((part) => part.type === 'tool-call' && part.callId === callId),
  );
}

/** The view without one result (and without its tool message if that empties it). */
function withoutResult(view: readonly ViewMessage[], target: Located): Message[] {
  const copy: Message[] = view.map((message) => ({ ...message }));
  const message = copy[target.messageIndex] as Message;
  message.content = message.content.filter((_, index) => index !== target.partIndex);
  return message.content.length === 0
    ? copy.filter((_, index) => index !== target.messageIndex)
    : copy;
}

const reportsCall = (violations: PairingViolation[], rules: PairingRules, callId: string) =>
  violations.some((violation) => violation.rules === rules && violation.callId === callId);

test('a dropped, duplicated or moved result is reported', () => {
  const mutation = fc.constantFrom('drop', 'duplicate', 'move');
  fc.assert(
    fc.property(historyPlan(false), fc.nat(), fc.nat(), mutation, (plan, pick, place, kind) => {
      const view = conversationView(buildHistory(plan).records);
      const results = resultsIn(view);
      fc.pre(results.length > 0);
      const target = results[pick % results.length] as Located;
      const callId = target.part.callId;
      if (kind === 'drop') {
        const broken = withoutResult(view, target);
        for (const rules of ALL_RULES) {
          assert.ok(
            pairingViolations(broken, rules).some(
              (violation) => violation.code === 'unanswered-call' && violation.callId === callId,
            ),
            `${rules} misses the dropped result of ${callId}`,
          );
        }
        return;
      }
      if (kind === 'duplicate') {
        // Anywhere after the original: the same tool message, or a new one further down.
        const at = target.messageIndex + 1 + (place % (view.length - target.messageIndex));
        const broken: Message[] = [...view];
        if (place % 2 === 0) {
          const original = view[target.messageIndex] as Message;
          broken[target.messageIndex] = {
            ...original,
            content: [...original.content, { ...target.part, output: 'again' }],
          };
        } else {
          broken.splice(at, 0, tool({ ...target.part, output: 'again' }));
        }
        const violations = pairingViolations(broken);
        for (const rules of ALL_RULES) {
          assert.ok(reportsCall(violations, rules, callId), `${rules} misses the duplicate`);
        }
        return;
      }
      // Move: to before its call, or past a message that is not a tool message.
      const remaining = withoutResult(view, target);
      const asking = askingIndex(remaining, callId);
      const candidates: number[] = [];
      for (let at = 0; at <= remaining.length; at += 1) {
        const between = remaining.slice(asking + 1, at);
        if (at <= asking || between.some((message) => message.role !== 'tool')) {
          candidates.push(at);
        }
      }
      fc.pre(candidates.length > 0);
      const at = candidates[place % candidates.length] as number;
      const broken = [...remaining];
      broken.splice(at, 0, tool(target.part));
      const violations = pairingViolations(broken);
      // Anthropic merges consecutive assistant messages, and consecutive tool messages: a
      // result moved past assistant messages and then only results still lands among the
      // results of the next user turn, which is legal there.
      const between = remaining
        .slice(asking + 1, at)
        .map((message) => message.role)
        .join(' ');
      if (at <= asking || !/^(assistant ?)*(tool ?)*$/.test(between)) {
        assert.ok(reportsCall(violations, 'anthropic', callId), 'anthropic misses the move');
      }
      assert.ok(reportsCall(violations, 'openai-chat', callId), 'openai-chat misses the move');
      if (at <= asking) {
        assert.ok(reportsCall(violations, 'openai-responses', callId), 'responses misses it');
      }
    }),
    parameters,
  );
});

// ---------------------------------------------------------------------------------------------
// Any records at all: the view never throws and is always in normal form.
// ---------------------------------------------------------------------------------------------

type RecordStep =
  | { kind: 'step'; step: Step }
  | { kind: 'compaction'; from: number; span: number }
  | { kind: 'foreign' | 'envelope' };

const recordStep: fc.Arbitrary<RecordStep> = fc.oneof(
  { weight: 6, arbitrary: step.map((inner) => ({ kind: 'step' as const, step: inner })) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compaction' as const),
      from: fc.nat(),
      span: fc.integer({ min: -3, max: 40 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('foreign' as const, 'envelope' as const) }),
  },
);

test('any records: the view never throws, is normalized, and breaks no rule but unanswered calls', () => {
  fc.assert(
    fc.property(fc.array(recordStep, { maxLength: 40 }), (steps) => {
      // Messages come from the same builder as above; the other records are slotted between.
      const messages = buildConversation(
        steps.flatMap((item) => (item.kind === 'step' ? [item.step] : [])),
      ).messages;
      const written: (TranscriptRecord | ForeignRecord)[] = [];
      let next = 0;
      for (const item of steps) {
        const seq = written.length;
        const header = { v: 1, seq, at: '2026-12-02T08:00:00.000Z' };
        if (item.kind === 'step') {
          written.push({ ...header, type: 'message', ...(messages[next++] as Message) });
        } else if (item.kind === 'compaction') {
          // Ranges the validator would refuse too (reaching the compaction itself, or later).
          const fromSeq = item.from % (seq + 3);
          written.push({
            ...header,
            type: 'compaction',
            fromSeq,
            toSeq: fromSeq + item.span,
            summary: 'S',
          });
        } else if (item.kind === 'foreign') {
          written.push({ ...header, type: 'note', unknown: true } as ForeignRecord);
        } else {
          written.push({ ...header, type: 'tool-settled', callId: 'c0', status: 'completed' });
        }
      }
      const view = conversationView(written);
      assertNormalForm(view);
      assert.deepEqual(normalizeConversation(view), view);
      const seqs = new Set(written.map((record) => record.seq));
      assert.ok(view.every((message) => seqs.has(message.seq)));
      assert.deepEqual(
        pairingViolations(view).filter((violation) => violation.code !== 'unanswered-call'),
        [],
      );
    }),
    parameters,
  );
});

test('messages of any shape (any part in any role): nothing throws, normalizing is idempotent', () => {
  const ids = fc.constantFrom('a', 'b', 'c', 'd', '', 'x.y');
  const part = fc.oneof(
    fc.constant({ type: 'text' as const, text: 't' }),
    fc.constant({ type: 'reasoning' as const, text: 'r' }),
    ids.map((id) => call(id)),
    ids.map((id) => result(id)),
  );
  const message = fc.record({
    role: fc.constantFrom<Message['role']>('system', 'user', 'assistant', 'tool'),
    content: fc.array(part, { maxLength: 4 }),
  });
  fc.assert(
    fc.property(fc.array(message, { maxLength: 12 }), (messages) => {
      const normalized = normalizeConversation(messages);
      assert.deepEqual(normalizeConversation(normalized), normalized);
      for (const rules of [...ALL_RULES, 'all'] as const) {
        for (const violation of pairingViolations(messages, rules)) {
          assert.ok(violation.index >= 0 && violation.index < messages.length);
          assert.ok(violation.message.length > 0);
        }
      }
    }),
    parameters,
  );
});
