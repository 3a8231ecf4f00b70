import { INTERRUPTED_MESSAGE } from '../revival/texts.ts';
import {
  type ForeignFormat,
  type FormatDetection,
  firstLine,
  type PlanContext,
  type RepairPlan,
  type SessionLines,
  type UnansweredCall,
  neverThrowingFormat,
} from './foreign-format.ts';
import { releaseDetection } from './release-detection.ts';
import { isObject, shown } from './untrusted-value.ts';

/*
 * The rollout files of the Codex CLI (`@openai/codex`,
 * `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`).
 *
 * Every line is `{"timestamp","ordinal"?,"type","payload","metadata"?}`; the first is
 * `session_meta` (its `cli_version` names the writer). What the model is sent is rebuilt from the
 * `response_item` lines in file order, a `compacted` line replacing everything before it. A tool
 * call is a `function_call`, `custom_tool_call` (freeform tools such as apply_patch),
 * `local_shell_call` or `tool_search_call` item; its result is the `function_call_output`
 * (function and local shell calls), `custom_tool_call_output` or `tool_search_output` item with
 * the same `call_id`, written when the tool finishes. `event_msg` lines are UI events
 * (`task_started`, `exec_command_end`, `token_count`, `turn_aborted`, …), never calls or results.
 *
 * A crash mid-tool leaves the call without its output. Codex answers such a call in memory with
 * the text "aborted" when it resumes the session, so the model never learns that the outcome is
 * unknown. When the user interrupts a turn, Codex 0.171 writes, in this order, an output for every
 * running call ("…aborted by user"), a user message `<turn_aborted>…</turn_aborted>` (the marker
 * it recognises as an interrupted turn) and an `event_msg` `turn_aborted`. The repair writes the
 * same three kinds of line, in the shapes Codex 0.171 writes them (the `fco_`/`msg_` ids, the
 * `internal_chat_message_metadata_passthrough` and `metadata` objects, `ordinal`), with our
 * honest text: the call's output is INTERRUPTED_MESSAGE, and the marker says that the process
 * stopped — not that the user interrupted on purpose. The output format has no error flag; the
 * text says it. Codex checks that ordinals run on without a gap, so appended lines continue
 * from the largest one.
 */

/** The `history_mode` values Codex 0.171 knows (absent: legacy). */
const KNOWN_HISTORY_MODES = new Set(['legacy', 'paginated']);

/** The envelope types of a rollout line (any other is a line Codex skips). */
const ROLLOUT_TYPES = new Set([
  'session_meta',
  'response_item',
  'compacted',
  'turn_context',
  'event_msg',
  'world_state',
  'token_usage_record',
]);

/** Items the server runs itself: they carry their own result and need no output. */
const SERVER_SIDE_CALLS = new Set([
  'web_search_call',
  'image_generation_call',
  'file_search_call',
  'code_interpreter_call',
  'mcp_call',
]);

/** The name of Codex's tool-search tool when the model calls it as a plain function. */
const TOOL_SEARCH_TOOL = 'tool_search';

/** Which output item answers a call. */
type OutputKind = 'function_call_output' | 'custom_tool_call_output' | 'tool_search_output';

/** A call found in the rollout, with the output kinds Codex accepts as its answer. */
interface Call {
  callId: string;
  toolName: string;
  line: number;
  /** The kind written for it; `accepts` may hold more (a tool search answered either way). */
  output: OutputKind;
  accepts: readonly OutputKind[];
  /** The turn the call was made in, as the item itself says (Codex 0.171 writes it). */
  turnId?: string;
}

/** One parsed rollout line. */
interface Item {
  line: number;
  type: string;
  payload: Record<string, unknown>;
}

/**
 * The Codex CLI's rollout format, as Codex 0.146 to 0.171 write it. `detect` recognises a rollout by
 * its first line (`session_meta` in the `{timestamp, type, payload}` envelope) and supports
 * the versions the repair was tested with; the format before that envelope, an unknown
 * `history_mode` and a rollout without `session_meta` are refused. `plan` answers every tool
 * call made after the last compaction that has no output with the output item Codex expects
 * (INTERRUPTED_MESSAGE as its text), then closes the turn the way Codex closes an interrupted
 * one: a `<turn_aborted>` user message saying the process stopped, and a `turn_aborted` event.
 *
 * @example
 * import { randomBytes } from 'node:crypto';
 * const detected = codexFormat.detect(lines); // { format: 'codex', version: '0.171.0', supported: true }
 * const plan = codexFormat.plan(lines, { now: new Date(), randomBytes });
 * if (plan.kind === 'repair') for (const line of plan.append) console.log(line);
 */
export const codexFormat: ForeignFormat = neverThrowingFormat(
  'codex',
  'Codex rollout',
  detectCodex,
  planCodex,
);

function detectCodex(lines: SessionLines): FormatDetection | null {
  const first = firstLine(lines)?.value;
  if (!isObject(first)) return null;
  if (first.type === 'session_meta' && isObject(first.payload)) {
    if (typeof first.timestamp !== 'string') return null;
    const meta = first.payload;
    const version = meta.cli_version;
    if (typeof version !== 'string' || version === '') {
      return {
        format: 'codex',
        version: 'unknown',
        supported: false,
        reason: 'its session_meta names no cli_version, so the writer is unknown',
      };
    }
    const mode = meta.history_mode;
    if (mode !== undefined && (typeof mode !== 'string' || !KNOWN_HISTORY_MODES.has(mode))) {
      return {
        format: 'codex',
        version: shownVersionOf(version),
        supported: false,
        reason: `history_mode ${shown(mode)} is not one the tested releases write (legacy, paginated)`,
      };
    }
    const session: { id?: string; cwd?: string } = {};
    if (typeof meta.id === 'string') session.id = meta.id;
    if (typeof meta.cwd === 'string') session.cwd = meta.cwd;
    // A rollout resumed by another release may say so in a later session_meta: each counts.
    // Each once, in the order last written (a rollout alternating two holds two).
    const versions = new Set([shownVersionOf(version)]);
    for (const line of lines) {
      const value = line.value;
      if (line.number === 1) continue;
      if (!isObject(value) || value.type !== 'session_meta' || !isObject(value.payload)) continue;
      const later = value.payload.cli_version;
      if (typeof later === 'string') {
        versions.delete(shownVersionOf(later));
        versions.add(shownVersionOf(later));
      }
    }
    return releaseDetection('codex', [...versions], session);
  }
  if (isPreEnvelopeMeta(first)) {
    const version = typeof first.cli_version === 'string' ? first.cli_version : 'unknown';
    return {
      format: 'codex',
      version: `${shownVersionOf(version)} (pre-envelope rollout)`,
      supported: false,
      reason:
        'the rollout format Codex wrote before the {timestamp, type, payload} envelope; repair knows only the format Codex 0.146 to 0.171 write',
    };
  }
  if (looksLikeRolloutLine(first)) {
    return {
      format: 'codex',
      version: 'unknown',
      supported: false,
      reason: `its first line is a ${shown(first.type)} line, not session_meta: without it the writer and its version are unknown`,
    };
  }
  return null;
}

/** The bare first line of a rollout from before the envelope (`{id, timestamp, …}`). */
function isPreEnvelopeMeta(value: Record<string, unknown>): boolean {
  if ('type' in value || 'payload' in value) return false;
  if (typeof value.id !== 'string' || typeof value.timestamp !== 'string') return false;
  return 'instructions' in value || 'git' in value || 'cli_version' in value;
}

/** A line in the rollout envelope, of a type only a rollout has. */
function looksLikeRolloutLine(value: Record<string, unknown>): boolean {
  return (
    typeof value.timestamp === 'string' &&
    typeof value.type === 'string' &&
    value.type !== 'session_meta' &&
    ROLLOUT_TYPES.has(value.type) &&
    isObject(value.payload)
  );
}

/**
 * What the rollout holds that the plan needs, from one pass: the counters it continues, and
 * the calls since the last compaction still waiting for an output where the pass ended (each
 * taken back when its output comes: only the calls waiting at one point are held).
 */
interface Rollout {
  maxOrdinal: number | undefined;
  maxSequence: number | undefined;
  sampledThrough: number | undefined;
  passthrough: boolean;
  /** The line of the last `compacted` item (0: none): only what follows is sent. */
  compactedAt: number;
  /** Calls since the last compaction without an output after them, by call id, the first of an id. */
  waiting: Map<string, Call>;
  /** Calls of a kind repair does not know, without an output after them, by call id. */
  unknown: Map<string, { type: string; callId: string; line: number }>;
  /** How many calls (each call id once while it waits) since the last compaction. */
  callCount: number;
}

function planCodex(lines: SessionLines, context: PlanContext): RepairPlan {
  const detected = detectCodex(lines);
  // A newer release is planned for; repairSession decides (allowNewer, seen shapes).
  if (detected === null || (!detected.supported && detected.newerThan === undefined)) {
    return { kind: 'refuse', detail: 'not a Codex rollout of a version repair knows' };
  }
  const rollout = readRollout(lines);
  const since = rollout.compactedAt === 0 ? '' : ' since the last compaction';
  const { open, strange } = settleCalls(lines, rollout);
  if (strange !== undefined) {
    return {
      kind: 'refuse',
      detail: `line ${strange.line}: a ${shown(strange.type)} item, a kind of call repair does not know, has no output; repair does not guess what answers it`,
    };
  }
  if (open.length === 0) {
    const calls = rollout.callCount;
    return {
      kind: 'clean',
      detail:
        calls === 0
          ? `no tool call${since}: nothing to answer`
          : `every tool call${since} has its output (${calls} call${calls === 1 ? '' : 's'})`,
    };
  }
  const first = open[0] as Call;
  const { resumed, turn } = afterFirst(lines, rollout, open, first);
  if (resumed !== null) return resumed;
  const time = context.now.getTime();
  if (!Number.isFinite(time)) return { kind: 'refuse', detail: 'the clock gave no valid time' };
  const append = answerLines(rollout, open, turn, context);
  const answeredCalls: UnansweredCall[] = open.map((call) => ({
    callId: call.callId,
    toolName: call.toolName,
    line: call.line,
  }));
  return { kind: 'repair', calls: answeredCalls, append };
}

/** Each line Codex itself reads (an object in the envelope; it skips the others). */
function* itemsOf(lines: SessionLines): Generator<Item> {
  for (const line of lines) {
    const value = line.value;
    if (!isObject(value) || typeof value.type !== 'string' || !isObject(value.payload)) continue;
    yield { line: line.number, type: value.type, payload: value.payload };
  }
}

const OUTPUT_KINDS: ReadonlySet<unknown> = new Set([
  'function_call_output',
  'custom_tool_call_output',
  'tool_search_output',
]);

/** One pass: the counters, the last compaction, the calls left waiting for an output. */
function readRollout(lines: SessionLines): Rollout {
  const rollout: Rollout = {
    maxOrdinal: undefined,
    maxSequence: undefined,
    sampledThrough: undefined,
    passthrough: false,
    compactedAt: 0,
    waiting: new Map(),
    unknown: new Map(),
    callCount: 0,
  };
  for (const line of lines) {
    const value = line.value;
    if (!isObject(value)) continue;
    if (typeof value.ordinal === 'number' && Number.isSafeInteger(value.ordinal)) {
      rollout.maxOrdinal = Math.max(rollout.maxOrdinal ?? value.ordinal, value.ordinal);
    }
    if (typeof value.type !== 'string' || !isObject(value.payload)) continue;
    if (value.type === 'compacted') {
      // Only what comes after the last compaction is still sent to the model.
      rollout.compactedAt = line.number;
      rollout.waiting.clear();
      rollout.unknown.clear();
      rollout.callCount = 0;
    }
    if (value.type !== 'response_item') continue;
    countersOf(rollout, value);
    waitFor(rollout, value.payload, line.number);
  }
  return rollout;
}

function countersOf(rollout: Rollout, value: Record<string, unknown>): void {
  if (
    isObject((value.payload as Record<string, unknown>).internal_chat_message_metadata_passthrough)
  ) {
    rollout.passthrough = true;
  }
  const metadata = value.metadata;
  if (!isObject(metadata)) return;
  const sequence = metadata.history_sequence;
  if (typeof sequence === 'number' && Number.isSafeInteger(sequence)) {
    rollout.maxSequence = Math.max(rollout.maxSequence ?? sequence, sequence);
  }
  const sampled = metadata.sampled_through_sequence;
  if (typeof sampled === 'number' && Number.isSafeInteger(sampled)) {
    rollout.sampledThrough = sampled;
  }
}

/** A response item: a call starts waiting, an output takes the call it answers back. */
function waitFor(rollout: Rollout, payload: Record<string, unknown>, line: number): void {
  const kind = payload.type;
  const callId = payload.call_id;
  if (typeof callId === 'string' && callId !== '') {
    if (OUTPUT_KINDS.has(kind)) {
      const call = rollout.waiting.get(callId);
      if (call?.accepts.includes(kind as OutputKind)) rollout.waiting.delete(callId);
      // An output of any kind after an unknown call answers it, as far as repair can tell.
      rollout.unknown.delete(callId);
      return;
    }
    if (typeof kind === 'string' && kind.endsWith('_output')) rollout.unknown.delete(callId);
  }
  const call = callOf(payload, line);
  if (call === 'not-a-call') return;
  if (call === 'unknown') {
    if (typeof callId === 'string' && callId !== '' && !rollout.unknown.has(callId)) {
      rollout.unknown.set(callId, { type: String(kind), callId, line });
    }
    return;
  }
  if (rollout.waiting.has(call.callId)) return;
  rollout.callCount += 1;
  rollout.waiting.set(call.callId, call);
}

/**
 * The calls still open, in order: of those left waiting, the ones with no output of a kind
 * that answers them anywhere since the compaction (an output may come before its call), each
 * the first call of its id; and a call of an unknown kind left without an output, whose id no
 * known call has. One pass, keeping only what concerns the calls left waiting.
 */
function settleCalls(
  lines: SessionLines,
  rollout: Rollout,
): { open: Call[]; strange: { type: string; line: number } | undefined } {
  const { waiting, unknown } = rollout;
  if (waiting.size === 0 && unknown.size === 0) return { open: [], strange: undefined };
  const answered = new Set<string>();
  const earlier = new Set<string>();
  const known = new Set<string>();
  for (const item of itemsOf(lines)) {
    if (item.line <= rollout.compactedAt || item.type !== 'response_item') continue;
    const callId = item.payload.call_id;
    if (typeof callId !== 'string' || callId === '') continue;
    const kind = item.payload.type;
    const call = waiting.get(callId);
    if (call !== undefined && OUTPUT_KINDS.has(kind) && call.accepts.includes(kind as OutputKind)) {
      answered.add(callId);
      continue;
    }
    if (!waiting.has(callId) && !unknown.has(callId)) continue;
    const made = callOf(item.payload, item.line);
    if (typeof made === 'string') continue;
    known.add(callId);
    if (call !== undefined && made.line < call.line) earlier.add(callId);
  }
  const open = [...waiting.values()]
    .filter((call) => !answered.has(call.callId) && !earlier.has(call.callId))
    .sort((a, b) => a.line - b.line);
  const strange = [...unknown.values()]
    .filter((call) => !known.has(call.callId))
    .sort((a, b) => a.line - b.line)[0];
  return { open, strange };
}

/**
 * One pass: whether Codex was resumed past the calls without a repair — the session went on
 * after the first unanswered call (Codex answered such a call itself, "aborted", right after
 * the call when it rebuilt the history, and the model has been sent that; an output appended
 * now would land after turns that came later) — and the turn the calls were made in: the last
 * task_started before the first of them (before the compaction too, when Codex compacted in
 * the middle of the turn).
 */
function afterFirst(
  lines: SessionLines,
  rollout: Rollout,
  open: readonly Call[],
  first: Call,
): { resumed: RepairPlan | null; turn: { turnId?: string; rootTurnId?: string } } {
  let turn: { turnId: string; rootTurnId?: string } | undefined;
  for (const item of itemsOf(lines)) {
    if (item.line <= first.line) {
      if (item.type === 'event_msg' && item.payload.type === 'task_started') {
        const turnId = item.payload.turn_id;
        if (typeof turnId === 'string' && turnId !== '') {
          const root = item.payload.root_turn_id;
          turn =
            typeof root === 'string' && root !== '' ? { turnId, rootTurnId: root } : { turnId };
        }
      }
      continue;
    }
    if (item.line <= rollout.compactedAt) continue;
    const wentOn = wentOnAt(item);
    if (wentOn === null) continue;
    const calls = open.map((call) => ({
      callId: call.callId,
      toolName: call.toolName,
      line: call.line,
    }));
    const resumed: RepairPlan = {
      kind: 'resumed',
      calls,
      told: 'Codex told the model "aborted" for each of them',
      detail: `${open.length} tool call(s) have no output (the first on line ${first.line}), but the session went on after them (line ${item.line}: ${wentOn}); Codex answers them itself ("aborted") where they stand, and outputs appended after that would answer them out of place`,
    };
    return { resumed, turn: {} };
  }
  if (turn !== undefined) return { resumed: null, turn };
  return { resumed: null, turn: first.turnId === undefined ? {} : { turnId: first.turnId } };
}

/** The lines Codex writes for an interrupted turn: an output per call, the marker, the event. */
function answerLines(
  rollout: Rollout,
  open: readonly Call[],
  turn: { turnId?: string; rootTurnId?: string },
  context: PlanContext,
): string[] {
  const { turnId } = turn;
  const timestamp = context.now.toISOString();
  const createTime = context.now.getTime() / 1000;
  let ordinal = rollout.maxOrdinal;
  let sequence = rollout.maxSequence;
  const line = (type: string, payload: Record<string, unknown>): string => {
    const envelope: Record<string, unknown> = { timestamp };
    if (ordinal !== undefined) {
      ordinal += 1;
      envelope.ordinal = ordinal;
    }
    envelope.type = type;
    envelope.payload = payload;
    if (type === 'response_item' && sequence !== undefined) {
      sequence += 1;
      envelope.metadata = {
        history_sequence: sequence,
        ...(rollout.sampledThrough === undefined
          ? {}
          : { sampled_through_sequence: rollout.sampledThrough }),
        client_authored: false,
        model_search_state: 'unused',
      };
    }
    return JSON.stringify(envelope);
  };
  const passthroughOf = (callTurnId: string | undefined, extra: Record<string, unknown> = {}) => {
    const owner = callTurnId ?? turnId;
    if (!rollout.passthrough || owner === undefined) return {};
    return {
      internal_chat_message_metadata_passthrough: {
        turn_id: owner,
        create_time: createTime,
        ...extra,
      },
    };
  };
  const append: string[] = [];
  for (const call of open) {
    append.push(line('response_item', outputItem(call, context, passthroughOf(call.turnId))));
  }
  const searches = open.some((call) => call.output === 'tool_search_output');
  append.push(
    line('response_item', {
      type: 'message',
      id: `msg_${uuidV7(context)}`,
      role: 'user',
      content: [{ type: 'input_text', text: turnAbortedText(searches) }],
      ...passthroughOf(undefined, {
        content_item_kinds: ['generic.turn_aborted'],
        content_item_metadata: [{ provenance: { type: 'harness', hook: false } }],
      }),
    }),
  );
  if (turnId !== undefined) {
    append.push(
      line('event_msg', {
        type: 'turn_aborted',
        ...(turn.rootTurnId === undefined ? {} : { root_turn_id: turn.rootTurnId }),
        turn_id: turnId,
        reason: 'interrupted',
      }),
    );
  }
  return append;
}

/** What a `response_item` payload is: a call needing an output, an unknown call, or neither. */
function callOf(payload: Record<string, unknown>, line: number): Call | 'unknown' | 'not-a-call' {
  const kind = payload.type;
  const callId = payload.call_id;
  const turnId = turnOf(payload);
  const base = (toolName: string, output: OutputKind, accepts: readonly OutputKind[]) => {
    const call: Call = { callId: callId as string, toolName, line, output, accepts };
    if (turnId !== undefined) call.turnId = turnId;
    return call;
  };
  // Codex cannot read a call without a string call_id (function and custom calls), or needs no
  // output for it (local shell and tool search calls): either way there is nothing to answer.
  if (typeof callId !== 'string' || callId === '') return 'not-a-call';
  switch (kind) {
    case 'function_call': {
      const name = typeof payload.name === 'string' ? payload.name : '?';
      const namespace = payload.namespace;
      if (name === TOOL_SEARCH_TOOL && (namespace === undefined || namespace === null)) {
        return base(name, 'tool_search_output', ['tool_search_output', 'function_call_output']);
      }
      return base(name, 'function_call_output', ['function_call_output']);
    }
    case 'custom_tool_call': {
      const name = typeof payload.name === 'string' ? payload.name : '?';
      return base(name, 'custom_tool_call_output', ['custom_tool_call_output']);
    }
    case 'local_shell_call':
      return base('local_shell', 'function_call_output', ['function_call_output']);
    case 'tool_search_call':
      return base(TOOL_SEARCH_TOOL, 'tool_search_output', ['tool_search_output']);
    default:
      if (typeof kind !== 'string' || SERVER_SIDE_CALLS.has(kind)) return 'not-a-call';
      return kind.endsWith('_call') ? 'unknown' : 'not-a-call';
  }
}

/** Why a line shows the session went on after a call (a turn ended or began), or null. */
function wentOnAt(item: Item): string | null {
  if (item.type === 'event_msg') {
    const type = item.payload.type;
    if (type === 'task_started' || type === 'task_complete' || type === 'turn_aborted') {
      return `event ${type}`;
    }
    return null;
  }
  if (item.type === 'response_item' && item.payload.type === 'message') {
    if (item.payload.role === 'user') return 'a user message';
  }
  return null;
}

/** The output item that answers `call`, in the shape Codex 0.171 writes it. */
function outputItem(
  call: Call,
  context: PlanContext,
  passthrough: Record<string, unknown>,
): Record<string, unknown> {
  switch (call.output) {
    case 'function_call_output':
      return {
        type: 'function_call_output',
        id: `fco_${uuidV7(context)}`,
        call_id: call.callId,
        output: INTERRUPTED_MESSAGE,
        ...passthrough,
      };
    case 'custom_tool_call_output':
      return {
        type: 'custom_tool_call_output',
        id: `ctco_${uuidV7(context)}`,
        call_id: call.callId,
        output: INTERRUPTED_MESSAGE,
        ...passthrough,
      };
    case 'tool_search_output':
      // A tool search result is a list of tools, with no room for text: this is the output
      // Codex itself fills in for a search without one. The marker message says what happened.
      return {
        type: 'tool_search_output',
        call_id: call.callId,
        status: 'completed',
        execution: 'client',
        tools: [],
        ...passthrough,
      };
  }
}

/** The marker Codex recognises as an interrupted turn, saying what really happened. */
function turnAbortedText(searches: boolean): string {
  const search = searches
    ? ' A tool search that was cut off is recorded as having found no tools: search again if you need them.'
    : '';
  return (
    '<turn_aborted>\n' +
    'This turn did not finish: the Codex process stopped while tools were running (it crashed ' +
    'or was killed), and `llm-agent repair` closed the turn afterwards. Every tool call that had no result is answered as interrupted: whether it took ' +
    'effect is unknown, and it has NOT been retried. Commands it started may have stopped with ' +
    'the process or may still be running in the background. Check the current state before ' +
    `retrying anything.${search}\n` +
    '</turn_aborted>'
  );
}

/** The turn a payload says it belongs to (`internal_chat_message_metadata_passthrough`). */
function turnOf(payload: Record<string, unknown>): string | undefined {
  const passthrough = payload.internal_chat_message_metadata_passthrough;
  if (!isObject(passthrough)) return undefined;
  const turnId = passthrough.turn_id;
  return typeof turnId === 'string' && turnId !== '' ? turnId : undefined;
}

/** A UUID v7 (the ids Codex writes): the time in ms, then random bits. */
function uuidV7(context: PlanContext): string {
  const bytes = new Uint8Array(16);
  let time = Math.max(0, Math.floor(context.now.getTime()));
  for (let index = 5; index >= 0; index -= 1) {
    bytes[index] = time % 256;
    time = Math.floor(time / 256);
  }
  const random = context.randomBytes(10);
  for (let index = 0; index < 10; index += 1) bytes[6 + index] = random[index] ?? 0;
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A version string from the file, safe to show: control characters escaped, cut short. */
function shownVersionOf(version: string): string {
  return /^[\w.+-]{1,40}$/.test(version) ? version : shown(version);
}
