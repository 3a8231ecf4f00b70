import { basename } from 'node:path';
import { childTranscriptPath } from '../src/subagents/child-layout.ts';
import { recordedOutcome } from '../src/subagents/child-outcome.ts';
import { conversationView } from '../src/transcript/conversation-view.ts';
import { decodeLine } from '../src/transcript/line-codec.ts';
import { normalizeConversation } from '../src/transcript/normalize-conversation.ts';
import { pairingViolations } from '../src/transcript/pairing-violations.ts';
import type { ForeignRecord, TranscriptRecord } from '../src/transcript/records.ts';
import type { Execution } from './agents.ts';

/*
 * The invariants every crash test checks after a crash and a revival to completion. Each
 * breach is counted under the figure it breaks (`lost`, `doubled`, `pairing`, `failed`) with
 * one line saying where.
 */

/** Breaches found, by figure. */
export interface Breaches {
  lost: string[];
  doubled: string[];
  pairing: string[];
  failed: string[];
}

/** No breaches yet. */
export function noBreaches(): Breaches {
  return { lost: [], doubled: [], pairing: [], failed: [] };
}

/** A harness part's breaches: the invariants' figures plus calls that threw where they must not. */
export type PartBreaches = Breaches & { throws: string[] };

/** The figures every part reports, in the order their lines are listed. */
export const FIGURES = ['lost', 'doubled', 'pairing', 'throws', 'failed'] as const;

/** A part's count of breaches under each figure (all must be zero). */
export type BreachFigures = Record<(typeof FIGURES)[number], number>;

/**
 * No breaches yet, for a harness part.
 *
 * @example
 * const breaches = noPartBreaches();
 */
export function noPartBreaches(): PartBreaches {
  return { ...noBreaches(), throws: [] };
}

/**
 * Sets each figure of `figures` to its number of breaches and returns every breach's line,
 * figure by figure (the order of {@link FIGURES}).
 *
 * @example
 * figures.failures = tallyBreaches(figures, breaches).slice(0, 20);
 */
export function tallyBreaches(figures: BreachFigures, breaches: PartBreaches): string[] {
  for (const figure of FIGURES) figures[figure] = breaches[figure].length;
  return FIGURES.flatMap((figure) => breaches[figure]);
}

/** How many breaches in all. */
export function breachCount(breaches: Breaches): number {
  return (
    breaches.lost.length +
    breaches.doubled.length +
    breaches.pairing.length +
    breaches.failed.length
  );
}

/**
 * The bytes of the records a file acknowledges: the longest prefix of complete lines that
 * decode, with seq rising by one from 0. A torn tail or junk after them is not acknowledged.
 *
 * @example
 * const acknowledged = acknowledgedPrefix(durableBytes);
 */
export function acknowledgedPrefix(bytes: Buffer): Buffer {
  let start = 0;
  let seq = 0;
  for (;;) {
    const end = bytes.indexOf(0x0a, start);
    if (end < 0) break;
    const decoded = decodeLine(bytes.subarray(start, end));
    if (!decoded.ok || (decoded.record as { seq?: unknown }).seq !== seq) break;
    seq += 1;
    start = end + 1;
  }
  return bytes.subarray(0, start);
}

/** A transcript after the revival, read by `peek`. */
export interface FinalTranscript {
  path: string;
  records: (TranscriptRecord | ForeignRecord)[] | null;
  /** When unreadable, why. */
  unreadable?: string;
  /** Its state as the last inspect saw it: finished, revival-cap, empty, … */
  state: string;
}

/** What the checker is told. */
export interface CheckInput {
  where: string;
  /** Acknowledged bytes per transcript path at the crash. */
  acknowledged: Map<string, Buffer>;
  /** Current bytes of every file after the revival. */
  finalBytes: Map<string, Buffer>;
  transcripts: FinalTranscript[];
  executions: Execution[];
  maxRevivals: number;
  /** Unreadable transcripts are allowed (a reordered power-cut image may leave damage). */
  allowUnreadable: boolean;
  /** States a transcript may be left in besides `finished` and `empty`. */
  allowedStates?: string[];
}

function records(transcript: FinalTranscript): TranscriptRecord[] {
  return (transcript.records ?? []).filter(
    (record) => !('unknown' in record),
  ) as TranscriptRecord[];
}

/**
 * Check the invariants (see docs/crash-safety.md §Invariants) and add what is broken.
 *
 * @example
 * checkInvariants(input, breaches);
 */
export function checkInvariants(input: CheckInput, breaches: Breaches): void {
  const { where } = input;
  // Everything acknowledged is still there, byte for byte.
  for (const [path, bytes] of input.acknowledged) {
    if (bytes.length === 0) continue;
    const now = input.finalBytes.get(path);
    if (now === undefined)
      breaches.lost.push(`${where}: ${path} (${bytes.length} acknowledged bytes) is gone`);
    else if (now.length < bytes.length || !now.subarray(0, bytes.length).equals(bytes)) {
      breaches.lost.push(
        `${where}: ${path} no longer starts with its ${bytes.length} acknowledged bytes`,
      );
    }
  }
  const byName = new Map<string, TranscriptRecord[]>();
  for (const transcript of input.transcripts) {
    if (transcript.records === null) {
      if (!input.allowUnreadable)
        breaches.failed.push(`${where}: ${transcript.path} unreadable: ${transcript.unreadable}`);
      continue;
    }
    const list = records(transcript);
    byName.set(basename(transcript.path), list);
    checkTranscript(transcript, list, input, breaches);
  }
  // A tool executes at most once per dispatch, and never without a dispatch.
  const seen = new Map<string, number>();
  for (const execution of input.executions) {
    const key = `${execution.transcript} ${execution.callId}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const [key, count] of seen) {
    if (count > 1) breaches.doubled.push(`${where}: ${key} executed ${count} times`);
    const [name, callId] = key.split(' ');
    const list = byName.get(name ?? '');
    if (list === undefined) continue;
    if (!list.some((record) => record.type === 'tool-dispatched' && record.callId === callId)) {
      breaches.failed.push(`${where}: ${key} executed with no dispatch in the transcript`);
    }
  }
  // Each spawn call has exactly one child: never two, and the one its result named.
  const children = new Map<string, string[]>();
  for (const transcript of input.transcripts) {
    const meta = records(transcript)[0];
    if (meta?.type !== 'session-meta' || meta.parent === undefined) continue;
    const key = `${meta.parent.transcript} ${meta.parent.callId}`;
    children.set(key, [...(children.get(key) ?? []), meta.agentId]);
  }
  for (const [key, agents] of children) {
    if (agents.length > 1)
      breaches.doubled.push(`${where}: spawn ${key} has ${agents.length} children`);
  }
  for (const transcript of input.transcripts) {
    for (const record of records(transcript)) {
      if (record.type !== 'message' || record.role !== 'tool') continue;
      for (const part of record.content) {
        if (part.type !== 'tool-result' || part.toolName !== 'spawn_agent' || part.isError)
          continue;
        const agentId = (part.output as { agentId?: unknown } | null)?.agentId;
        const link = `../${basename(transcript.path)} ${part.callId}`;
        if (typeof agentId !== 'string' || (children.get(link) ?? []).includes(agentId)) continue;
        const childPath = childTranscriptPath(transcript.path, agentId);
        const child = input.transcripts.find((entry) => entry.path === childPath);
        // A child transcript a reordered power cut damaged is refused, not missing.
        if (child?.records === null && input.allowUnreadable) continue;
        breaches.failed.push(
          `${where}: spawn ${part.callId} answered ${agentId}, which has no transcript`,
        );
      }
    }
  }
}

function checkTranscript(
  transcript: FinalTranscript,
  list: TranscriptRecord[],
  input: CheckInput,
  breaches: Breaches,
): void {
  const where = `${input.where}: ${basename(transcript.path)}`;
  const allowed = new Set(['finished', 'empty', ...(input.allowedStates ?? [])]);
  if (!allowed.has(transcript.state)) breaches.failed.push(`${where} left ${transcript.state}`);
  const finished = transcript.state === 'finished';
  if (finished && recordedOutcome(list) === null)
    breaches.failed.push(`${where} has no final answer`);
  // The cap is never exceeded.
  const revivals = list.filter((record) => record.type === 'run-revived').length;
  if (revivals > input.maxRevivals) {
    breaches.failed.push(`${where} has ${revivals} run-revived records, cap ${input.maxRevivals}`);
  }
  // Every dispatched call is settled exactly once; every call of a finished run answered once.
  const dispatched = new Map<string, number>();
  const settled = new Map<string, number>();
  const answered = new Map<string, number>();
  const called: string[] = [];
  for (const record of list) {
    if (record.type === 'tool-dispatched')
      dispatched.set(record.callId, (dispatched.get(record.callId) ?? 0) + 1);
    if (record.type === 'tool-settled')
      settled.set(record.callId, (settled.get(record.callId) ?? 0) + 1);
    if (record.type !== 'message') continue;
    for (const part of record.content) {
      if (part.type === 'tool-result')
        answered.set(part.callId, (answered.get(part.callId) ?? 0) + 1);
      if (part.type === 'tool-call') called.push(part.callId);
    }
  }
  for (const [callId, count] of dispatched) {
    if (count > 1) breaches.doubled.push(`${where}: ${callId} dispatched ${count} times`);
    const settles = settled.get(callId) ?? 0;
    if (settles > 1) breaches.doubled.push(`${where}: ${callId} settled ${settles} times`);
    else if (settles === 0 && finished)
      breaches.failed.push(`${where}: ${callId} dispatched, never settled`);
  }
  // A repair that cut bytes which may have held a dispatch makes the calls of the last turn
  // possibly dispatched: revival answers and settles them as interrupted, with no dispatch
  // record on disk (docs/transcript-format.md §6).
  const possiblyDispatched = list.some((record) => record.tailRepair?.possiblyDispatched === true);
  const interruptedSettles = new Set(
    list.flatMap((record) =>
      record.type === 'tool-settled' && record.reason === 'interrupted' ? [record.callId] : [],
    ),
  );
  for (const [callId, count] of settled) {
    const maybe = possiblyDispatched && interruptedSettles.has(callId);
    if (!dispatched.has(callId) && !maybe)
      breaches.failed.push(`${where}: ${callId} settled, never dispatched`);
    if (count > 1 && !dispatched.has(callId))
      breaches.doubled.push(`${where}: ${callId} settled ${count} times`);
  }
  for (const callId of called) {
    const count = answered.get(callId) ?? 0;
    if (count > 1) breaches.doubled.push(`${where}: ${callId} answered ${count} times`);
    else if (count === 0 && finished) breaches.failed.push(`${where}: ${callId} never answered`);
  }
  // The model-facing view of the transcript satisfies every provider's pairing rules.
  if (finished) {
    const view = normalizeConversation(conversationView(list));
    for (const violation of pairingViolations(view)) {
      breaches.pairing.push(`${where}: ${violation.code} ${violation.message}`);
    }
  }
}
