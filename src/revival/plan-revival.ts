import type {
  ForeignRecord,
  Message,
  MessageBody,
  RunRevivedBody,
  ToolSettledBody,
  TranscriptRecord,
} from '../transcript/records.ts';
import type { OpenDispatch, TailState } from '../transcript/tail-state.ts';
import { isKnownRecord } from '../transcript/validate-record.ts';
import type { PendingJoin } from './inspection.ts';
import { INTERRUPTED_MESSAGE, RESUME_NOTICE } from './texts.ts';

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
]);

/**
 * What a revive appends, in order.
 *
 * @example
 * const plan: RevivalPlan = planRevival({ records, lastMessage, state, maxRevivals: 2 });
 */
export interface RevivalPlan {
  /** One tool message per call answered as interrupted; made durable before any settle. */
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
  for (const dispatch of state.open) {
    const shape = settleShape(dispatch);
    if (shape === 'pending-join') {
      pendingJoins.push({ callId: dispatch.callId, agentIds: dispatch.joins ?? [] });
      continue;
    }
    if (shape === 'interrupted-answer') interruptedMessages.push(interruptedResult(dispatch));
    const settle: ToolSettledBody = {
      type: 'tool-settled',
      callId: dispatch.callId,
      ...STATUS[shape],
    };
    settles.push(settle);
    lists[LIST[shape]].push(dispatch.callId);
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

const STATUS: Record<Exclude<Shape, 'pending-join'>, Pick<ToolSettledBody, 'status' | 'reason'>> = {
  orphaned: { status: 'outcome-unknown', reason: 'orphaned' },
  'completed-unpersisted': { status: 'outcome-unknown', reason: 'completed-unpersisted' },
  'interrupted-by-revival': { status: 'failed', reason: 'interrupted' },
  'interrupted-answer': { status: 'failed', reason: 'interrupted' },
};

type ListName = 'interrupted' | 'completedUnpersisted' | 'orphaned';

const LIST: Record<Exclude<Shape, 'pending-join'>, ListName> = {
  orphaned: 'orphaned',
  'completed-unpersisted': 'completedUnpersisted',
  'interrupted-by-revival': 'interrupted',
  'interrupted-answer': 'interrupted',
};

function interruptedResult(dispatch: OpenDispatch): MessageBody {
  return {
    type: 'message',
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        callId: dispatch.callId,
        toolName: dispatch.toolName,
        output: INTERRUPTED_MESSAGE,
        isError: true,
      },
    ],
    extras: { injected: 'revival' },
  };
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

/** The settles an unfinished revive wrote after the run's last record, by list. */
function settledSince(
  records: readonly (TranscriptRecord | ForeignRecord)[],
  afterIndex: number,
): Record<ListName, string[]> {
  const lists: Record<ListName, string[]> = {
    interrupted: [],
    completedUnpersisted: [],
    orphaned: [],
  };
  for (const record of records.slice(afterIndex + 1)) {
    if (!isKnownRecord(record) || record.type !== 'tool-settled') continue;
    if (record.reason === 'interrupted') lists.interrupted.push(record.callId);
    else if (record.reason === 'completed-unpersisted')
      lists.completedUnpersisted.push(record.callId);
    else if (record.reason === 'orphaned') lists.orphaned.push(record.callId);
  }
  return lists;
}
