import type {
  ForeignRecord,
  JsonValue,
  Message,
  MessageBody,
  MessageExtras,
  ReconcileRecord,
  RunRevivedBody,
  ToolSettledBody,
  TranscriptRecord,
} from '../transcript/records.ts';
import type { OpenDispatch, TailState } from '../transcript/tail-state.ts';
import { isKnownRecord } from '../transcript/validate-record.ts';
import type { PendingJoin } from './inspection.ts';
import type { Reconciliation } from './reconcile-calls.ts';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
  RESUME_NOTICE,
} from './texts.ts';

/**
 * The settle reasons only revival writes. With `extras.injected = 'revival'` on its messages,
 * they are how a revive tells its own unfinished work (a revive killed half-way) from the run's.
 *
 * @example
 * REVIVAL_SETTLE_REASONS.has('orphaned'); // true
 */
export const REVIVAL_SETTLE_REASONS: ReadonlySet<string> = new Set([
  'interrupted',
  'completed-unpersisted',
  'orphaned',
  'reconciled',
  'did-not-happen',
]);

/**
 * What a revive appends, in order.
 *
 * @example
 * const plan: RevivalPlan = planRevival({ records, lastMessage, state, maxRevivals: 2 });
 */
export interface RevivalPlan {
  /**
   * One tool message per call answered now — as interrupted, or by what its tool's reconcile
   * established — made durable before any settle.
   */
  interruptedMessages: MessageBody[];
  /** One settle per open dispatch that is not a pending join, in dispatch order. */
  settles: ToolSettledBody[];
  /** The resume notice, or null when the conversation already ends with one. */
  notice: MessageBody | null;
  envelope: RunRevivedBody;
  pendingJoins: PendingJoin[];
}

/**
 * What {@link planRevival} decides from. It needs none of the conversation before the run's last
 * record: a revive streaming a transcript of any length keeps only these.
 *
 * @example
 * const input: RevivalInput = { records: tail.records, lastMessage: view.at(-1), state, maxRevivals: 2 };
 */
export interface RevivalInput {
  /**
   * The transcript's records from the last one the run wrote itself — the last that
   * {@link isRevivalWrite} does not claim — to the end ({@link RunTail} keeps exactly these
   * while streaming; all of them when there is no such record). All the records, or any
   * suffix holding that one, give the same plan.
   */
  records: readonly (TranscriptRecord | ForeignRecord)[];
  /** The last message of the whole transcript's conversation view (undefined for none). */
  lastMessage: Message | undefined;
  /** The folded state of the whole transcript. */
  state: TailState;
  maxRevivals: number;
  /**
   * What tools' reconciles answered about calls in flight ({@link reconcileCalls}); an answer
   * is used only for the open dispatch with its call id and idempotency key.
   */
  reconciled?: readonly Reconciliation[];
}

/**
 * Decide what a revive appends to a revivable transcript. Pure: the same input gives the same
 * plan, which is what makes a revive killed half-way and run again end where an uninterrupted
 * one does.
 *
 * - Each open dispatch, except a join still waiting: its turn compacted away → settle
 *   `outcome-unknown`/`orphaned`; a result in the conversation → settle
 *   `outcome-unknown`/`completed-unpersisted`, or `failed`/`interrupted` when revival wrote
 *   that result itself; otherwise an interrupted result, then `failed`/`interrupted`.
 * - The resume notice unless the conversation view already ends with one.
 * - The `run-revived` envelope. Its `afterSeq` is the last record of the run itself: records
 *   an unfinished revive wrote (its results, settles and notice) and checkpoints are skipped,
 *   so a revive that completes another's work names the record the first one decided after,
 *   and its lists include what the first one settled. A finished revival's envelope is never
 *   skipped: a revive after it (the revived run died before writing anything) is a revival of
 *   its own and counts against the cap — which is what stops a crash that reproduces at
 *   start-up from reviving for ever.
 *
 * @example
 * const plan = planRevival({
 *   records: tail.records, lastMessage: view.at(-1), state: session.state, maxRevivals: 2,
 * });
 * for (const message of plan.interruptedMessages) await session.append(message);
 */
export function planRevival(input: RevivalInput): RevivalPlan {
  const { records, state } = input;
  const afterIndex = lastRunRecordIndex(records);
  const afterSeq = records[afterIndex]?.seq ?? -1;
  const lists = settledSince(records, afterIndex);
  const interruptedMessages: MessageBody[] = [];
  const settles: ToolSettledBody[] = [];
  const pendingJoins: PendingJoin[] = [];
  const answers = new Map((input.reconciled ?? []).map((answer) => [answer.callId, answer]));
  for (const dispatch of state.open) {
    const shape = settleShape(dispatch);
    if (shape === 'pending-join') {
      pendingJoins.push({ callId: dispatch.callId, agentIds: dispatch.joins ?? [] });
      continue;
    }
    let settleAs: Exclude<Shape, 'pending-join'> | Reconciled = shape;
    if (shape === 'interrupted-answer') {
      const answer = answers.get(dispatch.callId);
      const fits = answer !== undefined && answer.idempotencyKey === dispatch.idempotencyKey;
      const reconciliation = fits ? answer : undefined;
      interruptedMessages.push(revivalAnswer(dispatch, reconciliation));
      if (reconciliation !== undefined) {
        lists.reconciled.push(reconcileEntry(dispatch.callId, reconciliation));
        if (reconciliation.answer !== 'unknown') settleAs = reconciliation.answer;
      }
    } else if (shape === 'interrupted-by-revival' && dispatch.resultReconciled !== undefined) {
      if (dispatch.resultReconciled !== 'unknown') settleAs = dispatch.resultReconciled;
    }
    settles.push({ type: 'tool-settled', callId: dispatch.callId, ...STATUS[settleAs] });
    const list = LIST[settleAs];
    if (list !== null) lists[list].push(dispatch.callId);
  }
  const last = input.lastMessage;
  const told = last?.role === 'user' && last.extras?.injected === 'revival';
  return {
    interruptedMessages,
    settles,
    notice: told
      ? null
      : {
          type: 'message',
          role: 'user',
          content: [{ type: 'text', text: RESUME_NOTICE }],
          extras: { injected: 'revival' },
        },
    envelope: {
      type: 'run-revived',
      ordinal: state.revivals + 1,
      maxRevivals: input.maxRevivals,
      afterSeq,
      interrupted: lists.interrupted,
      completedUnpersisted: lists.completedUnpersisted,
      orphaned: lists.orphaned,
      ...(lists.reconciled.length === 0 ? {} : { reconciled: lists.reconciled }),
    },
    pendingJoins,
  };
}

type Shape =
  | 'pending-join'
  | 'orphaned'
  | 'completed-unpersisted'
  | 'interrupted-by-revival'
  | 'interrupted-answer';

/**
 * How one open dispatch is settled (the seed's three shapes, and the join left open). Pure.
 *
 * @example
 * settleShape({ ...dispatch, resultSeq: 12, resultByRevival: false }); // 'completed-unpersisted'
 */
export function settleShape(dispatch: OpenDispatch): Shape {
  // A turn spliced away takes its result with it: nothing in the view answers or asks.
  if (dispatch.turnCompacted === true) return 'orphaned';
  if (dispatch.resultSeq !== undefined) {
    return dispatch.resultByRevival === true ? 'interrupted-by-revival' : 'completed-unpersisted';
  }
  return dispatch.joins === undefined ? 'interrupted-answer' : 'pending-join';
}

/** A call a tool's reconcile settled: it completed, or it did not happen. */
type Reconciled = 'completed' | 'did-not-happen';

const STATUS: Record<
  Exclude<Shape, 'pending-join'> | Reconciled,
  Pick<ToolSettledBody, 'status' | 'reason'>
> = {
  orphaned: { status: 'outcome-unknown', reason: 'orphaned' },
  'completed-unpersisted': { status: 'outcome-unknown', reason: 'completed-unpersisted' },
  'interrupted-by-revival': { status: 'failed', reason: 'interrupted' },
  'interrupted-answer': { status: 'failed', reason: 'interrupted' },
  completed: { status: 'completed', reason: 'reconciled' },
  'did-not-happen': { status: 'failed', reason: 'did-not-happen' },
};

type ListName = 'interrupted' | 'completedUnpersisted' | 'orphaned';

const LIST: Record<Exclude<Shape, 'pending-join'> | Reconciled, ListName | null> = {
  orphaned: 'orphaned',
  'completed-unpersisted': 'completedUnpersisted',
  'interrupted-by-revival': 'interrupted',
  'interrupted-answer': 'interrupted',
  completed: null,
  'did-not-happen': null,
};

/**
 * The revival's answer to a call in flight: the interrupted text, unless its tool's reconcile
 * established what happened. What the reconcile answered is recorded with it (format 2).
 */
function revivalAnswer(
  dispatch: OpenDispatch,
  reconciled: Reconciliation | undefined,
): MessageBody {
  let output: JsonValue = INTERRUPTED_MESSAGE;
  let isError = true;
  if (reconciled?.answer === 'completed') {
    const produced = reconciled.output ?? null;
    output =
      typeof produced === 'string'
        ? `${RECOVERED_NOTE}\n\n${produced}`
        : { recovered: RECOVERED_NOTE, output: produced };
    isError = reconciled.isError === true;
  } else if (reconciled?.answer === 'did-not-happen') {
    output = DID_NOT_HAPPEN_MESSAGE;
  }
  const extras: MessageExtras = { injected: 'revival' };
  if (reconciled !== undefined) extras.reconcile = reconcileRecordOf(reconciled);
  return {
    type: 'message',
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        callId: dispatch.callId,
        toolName: dispatch.toolName,
        output,
        isError,
      },
    ],
    extras,
  };
}

function reconcileRecordOf(reconciled: Reconciliation): ReconcileRecord {
  return reconciled.answer === 'unknown' && reconciled.detail !== undefined
    ? { answer: 'unknown', detail: reconciled.detail }
    : { answer: reconciled.answer };
}

function reconcileEntry(
  callId: string,
  reconciled: Reconciliation | ReconcileRecord,
): { callId: string } & ReconcileRecord {
  const record = 'idempotencyKey' in reconciled ? reconcileRecordOf(reconciled) : reconciled;
  return { callId, ...record };
}

/**
 * True for what a revive writes (and checkpoints, which any writer may add). Pure.
 *
 * @example
 * const tail = records.filter(isRevivalWrite);
 */
export function isRevivalWrite(record: TranscriptRecord | ForeignRecord): boolean {
  if (!isKnownRecord(record)) return false;
  switch (record.type) {
    case 'checkpoint':
      return true;
    case 'message':
      return record.extras?.injected === 'revival';
    case 'tool-settled':
      return REVIVAL_SETTLE_REASONS.has(record.reason ?? '');
    default:
      return false;
  }
}

function lastRunRecordIndex(records: readonly (TranscriptRecord | ForeignRecord)[]): number {
  let index = records.length - 1;
  while (index >= 0 && isRevivalWrite(records[index] as TranscriptRecord | ForeignRecord)) {
    index -= 1;
  }
  return index;
}

type Lists = Record<ListName, string[]> & {
  reconciled: ({ callId: string } & ReconcileRecord)[];
};

/** The settles an unfinished revive wrote after the run's last record, by list. */
function settledSince(
  records: readonly (TranscriptRecord | ForeignRecord)[],
  afterIndex: number,
): Lists {
  const lists: Lists = {
    interrupted: [],
    completedUnpersisted: [],
    orphaned: [],
    reconciled: [],
  };
  for (const record of records.slice(afterIndex + 1)) {
    if (isKnownRecord(record) && record.type === 'message') {
      // What an unfinished revive recorded of the reconciles it asked, with its answers.
      const asked = record.extras?.reconcile;
      const part = record.content[0];
      if (asked !== undefined && part?.type === 'tool-result') {
        lists.reconciled.push(reconcileEntry(part.callId, asked));
      }
      continue;
    }
    if (!isKnownRecord(record) || record.type !== 'tool-settled') continue;
    if (record.reason === 'interrupted') lists.interrupted.push(record.callId);
    else if (record.reason === 'completed-unpersisted')
      lists.completedUnpersisted.push(record.callId);
    else if (record.reason === 'orphaned') lists.orphaned.push(record.callId);
  }
  return lists;
}
