import type {
  ForeignRecord,
  Idempotency,
  JsonObject,
  ParentLink,
  ReconcileVerdict,
  Role,
  TailRepair,
  TranscriptRecord,
} from './records.ts';
import { haltOfFailure, legacyFailureHalt, type RunHalt } from './run-halt.ts';

/**
 * One tool call of the last assistant turn, and what has happened to it.
 *
 * @example
 * const neverStarted = state.turn?.calls.filter((call) => !call.dispatched) ?? [];
 */
export interface TailCall {
  callId: string;
  toolName: string;
  dispatched: boolean;
  answered: boolean;
}

/**
 * A dispatch with no settle yet.
 *
 * @example
 * const inFlight = state.open.filter((dispatch) => dispatch.resultSeq === undefined);
 */
export interface OpenDispatch {
  callId: string;
  toolName: string;
  idempotency: Idempotency;
  /** `false` when the tool declared none and `idempotency` is the assumed `side-effect`. */
  idempotencyDeclared?: false;
  /** The key the tool was given (format 2); absent for a dispatch written without one. */
  idempotencyKey?: string;
  /** Seq of the dispatch record. */
  seq: number;
  /** Seq of the assistant turn that asked for the call, when it is known. */
  turnSeq: number | null;
  /** For a join: the agent ids it waits for. */
  joins?: string[];
  /** Seq of the tool result answering it, when one was written. */
  resultSeq?: number;
  /** True when that result was written by a revival (an interrupted answer). */
  resultByRevival?: boolean;
  /**
   * For a result a revival wrote after asking the tool's reconcile (format 2): what it answered,
   * which decides how that revival's settle reads.
   */
  resultReconciled?: ReconcileVerdict;
  /** True when a compaction replaced the turn that asked for the call. */
  turnCompacted?: boolean;
  /**
   * True when no dispatch record exists, but a repair cut bytes that may have held one
   * ({@link TailRepair.possiblyDispatched}): `seq` is then the repair's record.
   */
  possiblyDispatched?: boolean;
}

/**
 * The last message of the conversation, summarised.
 *
 * @example
 * const finished = state.lastMessage?.role === 'assistant' && state.lastMessage.calls.length === 0;
 */
export interface LastMessage {
  seq: number;
  role: Role;
  injected?: string;
  /** For an assistant turn: its calls, in order. */
  calls: TailCall[];
}

/**
 * Everything revival needs to know about a transcript, folded record by record. It is small
 * (it grows with the open calls of one turn and the revivals, not with the transcript) and
 * JSON, so the writer can store it in a `checkpoint` and a reader can start from there.
 *
 * @example
 * const state: TailState = session.state;
 * console.log(state.revivals, state.open.length);
 */
export interface TailState {
  meta: {
    agentId: string;
    agentType: string;
    label: string;
    model: string;
    parent?: ParentLink;
    /** The `session-meta` record's `at`; absent from checkpoints written before it was kept. */
    createdAt?: string;
  } | null;
  /** How many records have been folded. */
  records: number;
  lastSeq: number;
  /** How many message records there are (system turns included). */
  messages: number;
  /** How many of them are user, assistant or tool turns: a conversation to carry on. */
  conversationMessages: number;
  /** Counted revivals: `run-revived` envelopes with an `afterSeq` not seen before. */
  revivals: number;
  revivedAfter: number[];
  lastMessage: LastMessage | null;
  /**
   * The last assistant turn and what became of its calls. Unlike `lastMessage` it survives the
   * user turns written after it (a resume notice written while a join is still pending), until
   * the next assistant turn replaces it.
   */
  turn: { seq: number; calls: TailCall[] } | null;
  open: OpenDispatch[];
  /** Bytes of message records, an input to the token estimate of a resume. */
  messageBytes: number;
  /** Why the run stopped, when it failed or was stopped and nothing came after that. */
  halt: RunHalt | null;
  /**
   * The seqs every compaction so far removed from the conversation view (each one's
   * `[fromSeq, min(toSeq, seq - 1)]`), merged into sorted, disjoint, non-touching ranges: a
   * long run that compacts the usual way has one. What a reader of the view must read are the
   * records outside them ({@link uncompactedRanges}). Null when unknown — a checkpoint written
   * before the field existed, or more than {@link MAX_COMPACTED_RANGES} ranges — and a reader
   * then reads every record.
   */
  compacted: [from: number, to: number][] | null;
}

/**
 * The most ranges {@link TailState.compacted} holds; past it the field becomes null (unknown),
 * so a checkpoint stays small whatever the compactions were.
 *
 * @example
 * const known = state.compacted !== null && state.compacted.length <= MAX_COMPACTED_RANGES;
 */
export const MAX_COMPACTED_RANGES = 64;

/**
 * The state of a transcript with no records: the start of every fold.
 *
 * @example
 * let state = emptyTailState();
 * for (const record of records) state = foldTailState(state, record, 0);
 */
export function emptyTailState(): TailState {
  return {
    meta: null,
    records: 0,
    lastSeq: -1,
    messages: 0,
    conversationMessages: 0,
    revivals: 0,
    revivedAfter: [],
    lastMessage: null,
    turn: null,
    open: [],
    messageBytes: 0,
    halt: null,
    compacted: [],
  };
}

/**
 * Fold one record into the state. Pure: returns a new state and leaves the old one alone.
 * `lineBytes` is the record's size on disk.
 *
 * @example
 * let state = emptyTailState();
 * for (const record of records) state = foldTailState(state, record, 0);
 */
export function foldTailState(
  state: TailState,
  record: TranscriptRecord | ForeignRecord,
  lineBytes: number,
): TailState {
  const repair = (record as { tailRepair?: TailRepair }).tailRepair;
  if (repair?.possiblyDispatched === true) {
    return foldTailState(assumeTurnDispatched(state, record.seq), withoutRepair(record), lineBytes);
  }
  const next: TailState = { ...state, records: state.records + 1, lastSeq: record.seq };
  switch (record.type) {
    case 'session-meta': {
      if (state.meta === null && 'agentId' in record) {
        const meta: NonNullable<TailState['meta']> = {
          agentId: record.agentId as string,
          agentType: record.agentType as string,
          label: record.label as string,
          model: record.model as string,
          createdAt: record.at,
        };
        if (record.parent !== undefined) meta.parent = record.parent as ParentLink;
        next.meta = meta;
      }
      return next;
    }
    case 'message':
      return foldMessage(next, record as Extract<TranscriptRecord, { type: 'message' }>, lineBytes);
    case 'tool-dispatched': {
      const dispatch = record as Extract<TranscriptRecord, { type: 'tool-dispatched' }>;
      // The turn, not the last message: a sequential tool's dispatch follows its sibling's result.
      const turn = state.turn;
      const inTurn = turn?.calls.some((c) => c.callId === dispatch.callId) === true;
      const open: OpenDispatch = {
        callId: dispatch.callId,
        toolName: dispatch.toolName,
        idempotency: dispatch.idempotency,
        seq: dispatch.seq,
        turnSeq: inTurn && turn !== null ? turn.seq : null,
      };
      if (dispatch.idempotencyDeclared === false) open.idempotencyDeclared = false;
      if (dispatch.idempotencyKey !== undefined) open.idempotencyKey = dispatch.idempotencyKey;
      if (dispatch.joins !== undefined) open.joins = dispatch.joins;
      next.open = [...state.open.filter((item) => item.callId !== dispatch.callId), open];
      next.lastMessage = markCall(state.lastMessage, dispatch.callId, 'dispatched');
      next.turn = markTurnCall(state.turn, dispatch.callId, 'dispatched');
      return next;
    }
    case 'tool-settled': {
      const callId = (record as Extract<TranscriptRecord, { type: 'tool-settled' }>).callId;
      next.open = state.open.filter((item) => item.callId !== callId);
      return next;
    }
    case 'compaction': {
      const { fromSeq, toSeq } = record as Extract<TranscriptRecord, { type: 'compaction' }>;
      next.open = state.open.map((item) =>
        item.turnSeq !== null && item.turnSeq >= fromSeq && item.turnSeq <= toSeq
          ? { ...item, turnCompacted: true }
          : item,
      );
      next.compacted = withCompacted(state.compacted, fromSeq, Math.min(toSeq, record.seq - 1));
      return next;
    }
    case 'run-failed':
      next.halt = haltOfFailure(record as Extract<TranscriptRecord, { type: 'run-failed' }>);
      return next;
    case 'run-stopped':
      next.halt = {
        state: 'stopped',
        seq: record.seq,
        at: record.at,
        detail: (record as Extract<TranscriptRecord, { type: 'run-stopped' }>).reason,
      };
      return next;
    case 'run-revived': {
      next.halt = null;
      const afterSeq = (record as Extract<TranscriptRecord, { type: 'run-revived' }>).afterSeq;
      if (!state.revivedAfter.includes(afterSeq)) {
        next.revivals = state.revivals + 1;
        next.revivedAfter = [...state.revivedAfter, afterSeq];
      }
      return next;
    }
    default:
      return next;
  }
}

/**
 * A repair cut bytes that may have held a durable dispatch: every call of the last assistant
 * turn with neither a dispatch nor a result becomes an open dispatch — worst case, a side
 * effect — so revival answers it as interrupted and no loop runs it. Pure.
 *
 * @example
 * const safe = assumeTurnDispatched(state, repairSeq);
 * safe.open.every((dispatch) => dispatch.idempotency !== undefined); // true
 */
export function assumeTurnDispatched(state: TailState, seq: number): TailState {
  const turn = state.turn;
  if (turn === null) return state;
  const unsure = turn.calls.filter((call) => !call.dispatched && !call.answered);
  if (unsure.length === 0) return state;
  let next: TailState = { ...state };
  for (const call of unsure) {
    next.open = [
      ...next.open,
      {
        callId: call.callId,
        toolName: call.toolName,
        idempotency: 'side-effect',
        seq,
        turnSeq: turn.seq,
        possiblyDispatched: true,
      },
    ];
    next = {
      ...next,
      lastMessage: markCall(next.lastMessage, call.callId, 'dispatched'),
      turn: markTurnCall(next.turn, call.callId, 'dispatched'),
    };
  }
  return next;
}

function withoutRepair(record: TranscriptRecord | ForeignRecord): TranscriptRecord | ForeignRecord {
  const { tailRepair: _repair, ...rest } = record as TranscriptRecord & { tailRepair?: unknown };
  return rest as TranscriptRecord;
}

function foldMessage(
  next: TailState,
  message: Extract<TranscriptRecord, { type: 'message' }>,
  lineBytes: number,
): TailState {
  next.messages += 1;
  next.messageBytes += lineBytes;
  const legacy = legacyFailureHalt(message);
  if (legacy !== null) {
    // The system's words, not the model's: a failure, and not part of the conversation.
    next.halt = legacy;
    return next;
  }
  next.halt = null;
  if (message.role !== 'system') next.conversationMessages += 1;
  if (message.role === 'tool') {
    let last = next.lastMessage;
    let turn = next.turn;
    const answered = new Set<string>();
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      answered.add(part.callId);
      last = markCall(last, part.callId, 'answered');
      turn = markTurnCall(turn, part.callId, 'answered');
    }
    next.turn = turn;
    const byRevival = message.extras?.injected === 'revival';
    const reconciled = byRevival ? message.extras?.reconcile?.answer : undefined;
    next.open = next.open.map((item) => {
      if (!answered.has(item.callId) || item.resultSeq !== undefined) return item;
      const answeredItem: OpenDispatch = {
        ...item,
        resultSeq: message.seq,
        resultByRevival: byRevival,
      };
      if (reconciled !== undefined) answeredItem.resultReconciled = reconciled;
      return answeredItem;
    });
    next.lastMessage = {
      seq: message.seq,
      role: 'tool',
      calls: last?.role === 'assistant' || last?.role === 'tool' ? last.calls : [],
    };
    return next;
  }
  const calls: TailCall[] = [];
  if (message.role === 'assistant') {
    for (const part of message.content) {
      if (part.type === 'tool-call') {
        calls.push({
          callId: part.callId,
          toolName: part.toolName,
          dispatched: false,
          answered: false,
        });
      }
    }
  }
  const last: LastMessage = { seq: message.seq, role: message.role, calls };
  if (message.extras?.injected !== undefined) last.injected = message.extras.injected;
  next.lastMessage = last;
  if (message.role === 'assistant') next.turn = { seq: message.seq, calls };
  return next;
}

function markTurnCall(
  turn: TailState['turn'],
  callId: string,
  field: 'dispatched' | 'answered',
): TailState['turn'] {
  if (turn === null || !turn.calls.some((call) => call.callId === callId)) return turn;
  return {
    seq: turn.seq,
    calls: turn.calls.map((call) => (call.callId === callId ? { ...call, [field]: true } : call)),
  };
}

function markCall(
  last: LastMessage | null,
  callId: string,
  field: 'dispatched' | 'answered',
): LastMessage | null {
  if (last === null || !last.calls.some((call) => call.callId === callId)) return last;
  return {
    ...last,
    calls: last.calls.map((call) => (call.callId === callId ? { ...call, [field]: true } : call)),
  };
}

/** `ranges` with `[from, to]` merged in; null when unknown or when it grows past the cap. */
function withCompacted(
  ranges: TailState['compacted'],
  from: number,
  to: number,
): TailState['compacted'] {
  if (ranges === null || !Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return null;
  if (from > to) return ranges;
  const merged: [number, number][] = [];
  let low = from;
  let high = to;
  for (const [start, end] of ranges) {
    if (end + 1 < low) merged.push([start, end]);
    else if (high + 1 < start) {
      merged.push([low, high]);
      low = start;
      high = end;
    } else {
      low = Math.min(low, start);
      high = Math.max(high, end);
    }
  }
  merged.push([low, high]);
  return merged.length > MAX_COMPACTED_RANGES ? null : merged;
}

/**
 * The seq ranges of `[0, lastSeq]` outside `compacted`, in order: where the records of the
 * conversation view and of the run's tail can be, every other record having been compacted
 * away. Null when `compacted` is unknown.
 *
 * @example
 * uncompactedRanges({ compacted: [[2, 40]], lastSeq: 50 }); // [[0, 1], [41, 50]]
 */
export function uncompactedRanges(
  state: Pick<TailState, 'compacted' | 'lastSeq'>,
): [from: number, to: number][] | null {
  if (state.compacted === null) return null;
  const ranges: [number, number][] = [];
  let next = 0;
  for (const [from, to] of state.compacted) {
    if (from > next) ranges.push([next, Math.min(from - 1, state.lastSeq)]);
    next = Math.max(next, to + 1);
  }
  if (next <= state.lastSeq) ranges.push([next, state.lastSeq]);
  return ranges.filter(([from, to]) => from <= to);
}

/**
 * The state as a checkpoint record stores it.
 *
 * @example
 * await session.append({ type: 'checkpoint', state: tailStateToJson(state) });
 */
export function tailStateToJson(state: TailState): JsonObject {
  return JSON.parse(JSON.stringify(state)) as JsonObject;
}

/**
 * Read a checkpoint's state back; null when it is not one this version wrote, in which case
 * the reader falls back to a full scan.
 *
 * @example
 * const last = records.findLast((record): record is RecordOf<'checkpoint'> => record.type === 'checkpoint');
 * const state = last === undefined ? null : tailStateFromJson(last.state); // null: scan it all
 */
export function tailStateFromJson(value: JsonObject): TailState | null {
  const candidate = value as unknown as TailState;
  if (
    typeof candidate.records !== 'number' ||
    typeof candidate.lastSeq !== 'number' ||
    typeof candidate.messages !== 'number' ||
    typeof candidate.conversationMessages !== 'number' ||
    typeof candidate.revivals !== 'number' ||
    !('turn' in candidate) ||
    !Array.isArray(candidate.revivedAfter) ||
    !Array.isArray(candidate.open) ||
    typeof candidate.messageBytes !== 'number'
  ) {
    return null;
  }
  // A range reaching past the checkpoint would hide records written after it: not one the
  // writer made (a compaction only reaches records before it), so it is unknown.
  const compacted = compactedFromJson(
    (value as { compacted?: unknown }).compacted,
    candidate.lastSeq,
  );
  if (candidate.halt === undefined) {
    // Written before `halt` existed: such a writer ended a failed run with an assistant turn
    // of its own, which its checkpoint cannot tell from an answer. Trusted when its last
    // message is anything else; otherwise the reader starts further back.
    const last = candidate.lastMessage;
    if (last?.role === 'assistant' && last.calls.length === 0) return null;
    return { ...candidate, halt: null, compacted };
  }
  return { ...candidate, compacted };
}

/**
 * A checkpoint's `compacted`, checked as strictly as the writer makes it (sorted, disjoint,
 * non-touching, within the cap); anything else, or its absence, is unknown (null).
 */
function compactedFromJson(value: unknown, lastSeq: number): TailState['compacted'] {
  if (!Array.isArray(value) || value.length > MAX_COMPACTED_RANGES) return null;
  let previous = -2;
  for (const range of value) {
    if (!Array.isArray(range) || range.length !== 2) return null;
    const [from, to] = range as unknown[];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return null;
    if ((from as number) < 0 || (from as number) > (to as number)) return null;
    if ((from as number) <= previous + 1 || (to as number) > lastSeq) return null;
    previous = to as number;
  }
  return value as [number, number][];
}
