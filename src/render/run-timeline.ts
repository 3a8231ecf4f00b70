/**
 * A run as steps on a timeline, from its records: each model turn, each tool call and each
 * input, with when it started, how long it took and the tokens it added; and the marks
 * between them — each revival (how long the run was down), a failure, a stop, a compaction,
 * and the death of a run not revived since. Pure: records in, data out.
 *
 * @module
 */
import { INTERRUPTED_MESSAGE } from '../revival/index.ts';
import type { ForeignRecord, JsonValue, Message, TranscriptRecord } from '../transcript/records.ts';

/**
 * One step: `model` (a turn the model wrote), `tool` (a call, from its dispatch or its call to
 * its result), `input` (a user turn) or `system` (a turn the system wrote).
 *
 * @example
 * const step: TimelineStep = { type: 'step', kind: 'model', seq: 4, label: 'model', startMs: 0, durationMs: 820, tokens: 56, tokensFrom: 'estimate' };
 */
export interface TimelineStep {
  type: 'step';
  kind: 'model' | 'tool' | 'input' | 'system';
  /** The message to link to: the turn itself, or the turn that made the call. */
  seq: number;
  /** Untrusted for a tool (its name) or a system turn (its kind). */
  label: string;
  callId?: string;
  /** Milliseconds since the epoch; undefined when the record's time is not a time. */
  startMs: number | undefined;
  /** Undefined while a call has no end (in flight, never answered, or answered as interrupted). */
  durationMs: number | undefined;
  /** What the step added to the conversation, in tokens. */
  tokens: number;
  /** `provider` when the turn recorded its usage, else estimated as characters ÷ 4. */
  tokensFrom: 'provider' | 'estimate';
  /** A call's end: `completed`, `failed`, `interrupted` (answered by a revival), `in flight`. */
  status?: 'completed' | 'failed' | 'interrupted' | 'outcome-unknown' | 'in flight';
}

/**
 * A mark between steps: a revival, a failure, a stop, a compaction, or where the process died.
 *
 * @example
 * const mark: TimelineMark = { type: 'mark', kind: 'revived', seq: 9, atMs: 0, text: 'revival #1 of 3', downMs: 4000 };
 */
export interface TimelineMark {
  type: 'mark';
  kind: 'revived' | 'failed' | 'stopped' | 'compaction' | 'died';
  seq: number;
  atMs: number | undefined;
  /** Our words, with ids from the transcript in them: escape it. */
  text: string;
  /** For a revival: from the last record before it to the revival. */
  downMs?: number;
}

/**
 * A run's timeline: its steps and marks in the order they happened, and its totals.
 *
 * @example
 * const { entries, steps, tokens } = runTimeline(records, false);
 */
export interface RunTimeline {
  entries: (TimelineStep | TimelineMark)[];
  steps: number;
  tokens: number;
  /** Whether any step's tokens are an estimate. */
  estimated: boolean;
  /** From the first record to the last, in milliseconds. */
  spanMs: number | undefined;
  revivals: number;
}

/**
 * The timeline of a run's records (in file order). `died`: the process died after the last
 * record and nothing revived it since (the run is revivable or capped), marked at the end.
 *
 * @example
 * const timeline = runTimeline((await peek(path)).records, node.state === 'revivable');
 */
export function runTimeline(
  records: readonly (TranscriptRecord | ForeignRecord)[],
  died: boolean,
): RunTimeline {
  const entries: (TimelineStep | TimelineMark)[] = [];
  const calls = new Map<string, TimelineStep>();
  const times = new Map<number, number | undefined>();
  let previousMs: number | undefined;
  let revivals = 0;
  for (const record of records) {
    const atMs = timeOf(record.at);
    times.set(record.seq, atMs);
    if ('unknown' in record) continue;
    switch (record.type) {
      case 'message':
        messageSteps(record, atMs, previousMs, entries, calls);
        break;
      case 'tool-dispatched': {
        const step =
          calls.get(record.callId) ??
          toolStep(record.seq, record.toolName, record.callId, atMs, entries, calls);
        step.startMs = atMs;
        break;
      }
      case 'tool-settled': {
        const step = calls.get(record.callId);
        if (step === undefined || step.status === 'interrupted') break;
        if (record.reason === 'interrupted') step.status = 'interrupted';
        else {
          step.durationMs ??= between(step.startMs, atMs);
          step.status ??= record.status;
        }
        break;
      }
      case 'run-revived': {
        revivals += 1;
        const down = between(times.get(record.afterSeq) ?? previousMs, atMs);
        entries.push({
          type: 'mark',
          kind: 'revived',
          seq: record.seq,
          atMs,
          text: `revival #${record.ordinal} of ${record.maxRevivals}: the process died after seq ${record.afterSeq}${
            record.interrupted.length === 0
              ? ''
              : `; ${record.interrupted.join(', ')} answered as interrupted`
          }`,
          ...(down === undefined ? {} : { downMs: down }),
        });
        for (const callId of record.interrupted) {
          const step = calls.get(callId);
          if (step !== undefined) step.status = 'interrupted';
        }
        break;
      }
      case 'run-failed':
        entries.push({
          type: 'mark',
          kind: 'failed',
          seq: record.seq,
          atMs,
          text: `failed: ${record.cause} (${record.model})`,
        });
        break;
      case 'run-stopped':
        entries.push({
          type: 'mark',
          kind: 'stopped',
          seq: record.seq,
          atMs,
          text: `stopped: ${record.reason}`,
        });
        break;
      case 'compaction':
        entries.push({
          type: 'mark',
          kind: 'compaction',
          seq: record.seq,
          atMs,
          text: `compaction: seq ${record.fromSeq}–${record.toSeq} summarised`,
        });
        break;
    }
    if (atMs !== undefined) previousMs = atMs;
  }
  return finish(entries, calls, records, died, revivals);
}

function finish(
  entries: (TimelineStep | TimelineMark)[],
  calls: Map<string, TimelineStep>,
  records: readonly (TranscriptRecord | ForeignRecord)[],
  died: boolean,
  revivals: number,
): RunTimeline {
  const open = [...calls.values()].filter(
    (step) => step.durationMs === undefined && step.status === undefined,
  );
  for (const step of open) step.status = 'in flight';
  const last = records[records.length - 1];
  if (died && last !== undefined) {
    entries.push({
      type: 'mark',
      kind: 'died',
      seq: last.seq,
      atMs: timeOf(last.at),
      text: `the process died after seq ${last.seq}${open.length === 0 ? '' : `; in flight: ${open.map((step) => step.callId).join(', ')}`}`,
    });
  }
  const steps = entries.filter((entry): entry is TimelineStep => entry.type === 'step');
  const first = records[0];
  return {
    entries,
    steps: steps.length,
    tokens: steps.reduce((sum, step) => sum + step.tokens, 0),
    estimated: steps.some((step) => step.tokensFrom === 'estimate'),
    spanMs:
      first === undefined || last === undefined
        ? undefined
        : between(timeOf(first.at), timeOf(last.at)),
    revivals,
  };
}

/** The steps of one message record: a model turn (and its calls), results, or an input. */
function messageSteps(
  record: Message & { seq: number },
  atMs: number | undefined,
  previousMs: number | undefined,
  entries: (TimelineStep | TimelineMark)[],
  calls: Map<string, TimelineStep>,
): void {
  const injected = record.extras?.injected;
  if (record.role === 'assistant') {
    const usage = providerTokens(record.extras?.usage);
    entries.push({
      type: 'step',
      kind: injected === undefined ? 'model' : 'system',
      seq: record.seq,
      label: injected === undefined ? 'model' : `written by the system (${injected})`,
      startMs: previousMs,
      durationMs: between(previousMs, atMs),
      tokens: usage ?? estimate(record.content),
      tokensFrom: usage === undefined ? 'estimate' : 'provider',
    });
    for (const part of record.content) {
      if (part.type === 'tool-call' && !calls.has(part.callId)) {
        toolStep(record.seq, part.toolName, part.callId, atMs, entries, calls);
      }
    }
    return;
  }
  if (record.role === 'tool') {
    for (const part of record.content) {
      if (part.type !== 'tool-result') continue;
      const step =
        calls.get(part.callId) ??
        toolStep(record.seq, part.toolName, part.callId, atMs, entries, calls);
      step.tokens = estimate([part]);
      // An interrupted call's answer was written by a revival: how long the tool ran is unknown.
      if (injected === 'revival' || (part.isError && part.output === INTERRUPTED_MESSAGE)) {
        step.status = 'interrupted';
      } else {
        step.durationMs ??= between(step.startMs, atMs);
        step.status ??= part.isError ? 'failed' : 'completed';
      }
    }
    return;
  }
  entries.push({
    type: 'step',
    kind: injected === undefined ? 'input' : 'system',
    seq: record.seq,
    label: injected === undefined ? record.role : `written by the system (${injected})`,
    startMs: atMs,
    durationMs: undefined,
    tokens: estimate(record.content),
    tokensFrom: 'estimate',
  });
}

function toolStep(
  seq: number,
  toolName: string,
  callId: string,
  startMs: number | undefined,
  entries: (TimelineStep | TimelineMark)[],
  calls: Map<string, TimelineStep>,
): TimelineStep {
  const step: TimelineStep = {
    type: 'step',
    kind: 'tool',
    seq,
    label: toolName,
    callId,
    startMs,
    durationMs: undefined,
    tokens: 0,
    tokensFrom: 'estimate',
  };
  entries.push(step);
  calls.set(callId, step);
  return step;
}

/** The output tokens a turn's `extras.usage` recorded, if it did. */
function providerTokens(usage: JsonValue | undefined): number | undefined {
  if (usage === null || typeof usage !== 'object' || Array.isArray(usage)) return undefined;
  const output = usage.outputTokens;
  return typeof output === 'number' && Number.isFinite(output) && output >= 0 ? output : undefined;
}

/** Tokens as characters ÷ 4 (as `status` estimates a resume), counted without serialising. */
function estimate(value: JsonValue | readonly unknown[]): number {
  let chars = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') chars += item.length;
    else if (Array.isArray(item)) for (const entry of item) stack.push(entry);
    else if (item !== null && typeof item === 'object') {
      for (const [key, field] of Object.entries(item)) {
        chars += key.length + 4;
        stack.push(field);
      }
    } else chars += String(item).length;
  }
  return Math.ceil(chars / 4);
}

/** A record's time in milliseconds, or undefined when it is not one. */
function timeOf(at: string): number | undefined {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? undefined : ms;
}

function between(start: number | undefined, end: number | undefined): number | undefined {
  return start === undefined || end === undefined ? undefined : Math.max(0, end - start);
}
