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
import { isObject, shown } from './untrusted-value.ts';

/*
 * The session files of the pi coding agent (`@mariozechner/pi-coding-agent`,
 * `~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`).
 *
 * The first line is a header `{"type":"session","version"?,"id","timestamp","cwd",…}`; every
 * other line is an entry. Version 1 (pi ≤ 0.30) has no `version` and no entry ids: the session
 * is the entries in file order. Version 2 (pi 0.31–0.34) gives every entry an 8-hex `id` and a
 * `parentId`, making a tree; version 3 (pi ≥ 0.35, still current in 0.73) only renames the
 * message role `hookMessage` to `custom`. pi reads the LAST entry as the leaf and sends the
 * `parentId` path from the root to it; it skips lines that are not JSON, and migrates an older
 * file to version 3 when it opens it (rewriting it), which keeps entries appended in the file's
 * own version on the path.
 *
 * pi writes an assistant message when it ends and each tool result when its tool finishes, so a
 * crash mid-tool leaves the assistant message with N `toolCall` blocks and fewer than N
 * `toolResult` messages after it. When it sends such a session today, pi drops an assistant
 * message whose `stopReason` is `aborted` or `error` (tool calls and all), and answers every
 * other unanswered call in memory with "No result provided". The repair appends, for each
 * unanswered call, the `toolResult` message entry pi writes for a failed tool itself, with our
 * honest text instead, chained from the last entry so that it is on the path pi sends.
 */

/** The header versions whose shapes were checked against the client and its source. */
const SUPPORTED_VERSIONS = [1, 2, 3] as const;

/** The role of a tool result message. */
const RESULT_ROLE = 'toolResult';

/** Entry types pi turns into a message of its own (not a tool result) when it sends a session. */
const MESSAGE_ENTRY_TYPES = new Set(['custom_message', 'branch_summary', 'compaction']);

/** A parsed entry and the line it is on. */
interface Entry {
  value: Record<string, unknown>;
  line: number;
}

/**
 * The pi coding agent's session format: header versions 1, 2 and 3 (pi 0.73.1 writes 3).
 * `plan` answers every tool call of the session's last assistant message that has no result,
 * with one `toolResult` message entry per call (`isError: true`, the text revival uses), chained
 * from the file's last entry. An assistant message that ended `aborted` or `error` needs
 * nothing: pi drops it, tool calls and all, when it sends the session.
 *
 * @example
 * import { randomBytes } from 'node:crypto';
 * const detected = piFormat.detect(lines); // { format: 'pi', version: 'session v3', supported: true }
 * const plan = piFormat.plan(lines, { now: new Date(), randomBytes });
 * if (plan.kind === 'repair') for (const line of plan.append) console.log(line);
 */
export const piFormat: ForeignFormat = neverThrowingFormat('pi', 'pi session', detectPi, planPi);

function detectPi(lines: SessionLines): FormatDetection | null {
  const header = firstLine(lines)?.value;
  if (!isObject(header) || header.type !== 'session' || typeof header.id !== 'string') return null;
  // pi writes both into every header it has ever written; other tools' `session` lines lack them.
  if (typeof header.timestamp !== 'string' || typeof header.cwd !== 'string') return null;
  const version = header.version;
  const session = { id: header.id, cwd: header.cwd };
  if (version === undefined) {
    return { format: 'pi', version: 'session v1', supported: true, session };
  }
  if (typeof version === 'number' && (SUPPORTED_VERSIONS as readonly number[]).includes(version)) {
    return { format: 'pi', version: `session v${version}`, supported: true, session };
  }
  return {
    format: 'pi',
    version: `session version ${shown(version)}`,
    supported: false,
    reason: `repair knows pi session versions 1 (no version), 2 and 3 (what pi 0.73.1 writes); this one it was not tested with`,
  };
}

/** How an entry counts on the walk back from the leaf to the nearest assistant message. */
const OTHER = 0;
const ASSISTANT = 1;
const RESULT = 2;
/** Something pi sends as a message of its own (a user turn, a summary). */
const BETWEEN = 3;
/** A message entry without a message. */
const BROKEN = 4;
type Kind = typeof OTHER | typeof ASSISTANT | typeof RESULT | typeof BETWEEN | typeof BROKEN;

function kindOf(value: Record<string, unknown>): Kind {
  if (value.type === 'message') {
    const message = value.message;
    if (!isObject(message)) return BROKEN;
    if (message.role === 'assistant') return ASSISTANT;
    if (message.role === RESULT_ROLE) return RESULT;
    return BETWEEN;
  }
  return typeof value.type === 'string' && MESSAGE_ENTRY_TYPES.has(value.type) ? BETWEEN : OTHER;
}

/**
 * The entries of a tree session, as pi reads them, without their text: per entry its id and
 * its parent's (primitives; a parent's id held once), its line and its kind. The path is walked
 * on this; only the lines the plan then needs are read again.
 */
interface Index {
  ids: unknown[];
  parents: unknown[];
  lines: number[];
  kinds: Kind[];
  /** Ids to entries, last wins (pi indexes them so). */
  byId: Map<unknown, number>;
}

/** What the walk back from the leaf found: lines to read again, or a refusal, or nothing. */
interface Walk {
  leafLine: number;
  assistantLine: number | undefined;
  /** A message entry without a message met on the way (the nearest the leaf). */
  brokenLine: number | undefined;
  /** The entry pi sends as a message of its own nearest the leaf, after the assistant message. */
  betweenLine: number | undefined;
  /** Whether a line's entry, a tool result, is on the way from the leaf to the assistant. */
  onTheWay: (line: number, kind: Kind) => boolean;
  /** The file's ids (a fresh one is none of them). */
  ids: ReadonlyMap<unknown, number>;
}

/** Each entry pi reads (not the header, a repeated one, a line not JSON), with its kind. */
function* entries(
  lines: SessionLines,
): Generator<{ line: number; value: Record<string, unknown> } | { refuse: RepairPlan }> {
  for (const line of lines) {
    if (line.number === 1 || line.value === undefined) continue; // pi skips a line not JSON
    if (!isObject(line.value)) {
      yield {
        refuse: {
          kind: 'refuse',
          detail: `line ${line.number} is JSON but not a pi entry; pi itself cannot load this session`,
        },
      };
      return;
    }
    if (line.value.type === 'session') continue; // pi skips a repeated header too
    yield { line: line.number, value: line.value };
  }
}

/**
 * A session of version 1 is its entries in file order: the walk back from the last entry is a
 * pass that keeps where the last assistant message is and what came after it.
 */
function walkInOrder(lines: SessionLines): Walk | RepairPlan {
  let leafLine = 0;
  let assistantLine: number | undefined;
  let brokenLine: number | undefined;
  let betweenLine: number | undefined;
  for (const entry of entries(lines)) {
    if ('refuse' in entry) return entry.refuse;
    leafLine = entry.line;
    const kind = kindOf(entry.value);
    if (kind === ASSISTANT) {
      assistantLine = entry.line;
      brokenLine = undefined;
      betweenLine = undefined;
    } else if (kind === BROKEN) brokenLine = entry.line;
    else if (kind === BETWEEN) betweenLine = entry.line;
  }
  const after = assistantLine ?? 0;
  return {
    leafLine,
    assistantLine,
    brokenLine,
    betweenLine,
    onTheWay: (line, kind) => kind === RESULT && line > after,
    ids: new Map(),
  };
}

/** A tree session (v2, v3): the index, the path from the leaf, the walk back along it. */
function walkTree(lines: SessionLines): Walk | RepairPlan {
  const index: Index = { ids: [], parents: [], lines: [], kinds: [], byId: new Map() };
  for (const entry of entries(lines)) {
    if ('refuse' in entry) return entry.refuse;
    const at = index.lines.length;
    index.lines.push(entry.line);
    index.kinds.push(kindOf(entry.value));
    const id = primitive(entry.value.id);
    const parent = primitive(entry.value.parentId);
    const known = index.byId.get(parent);
    index.parents.push(known === undefined ? parent : index.ids[known]);
    const held = index.byId.get(id);
    index.ids.push(held === undefined ? id : index.ids[held]);
    index.byId.set(id, at);
  }
  const leaf = index.lines.length - 1;
  const path = leaf < 0 ? [] : pathTo(index, leaf);
  if (typeof path === 'string') return { kind: 'refuse', detail: path };
  const results = new Set<number>();
  const walk: Walk = {
    leafLine: leaf < 0 ? 0 : (index.lines[leaf] as number),
    assistantLine: undefined,
    brokenLine: undefined,
    betweenLine: undefined,
    onTheWay: (line) => results.has(line),
    ids: index.byId,
  };
  for (let step = path.length - 1; step >= 0; step -= 1) {
    const at = path[step] as number;
    const line = index.lines[at] as number;
    const kind = index.kinds[at];
    if (kind === ASSISTANT) {
      walk.assistantLine = line;
      break;
    }
    if (kind === BROKEN) {
      walk.brokenLine = line;
      break;
    }
    if (kind === RESULT) results.add(line);
    if (kind === BETWEEN) walk.betweenLine ??= line;
  }
  return walk;
}

/** A JSON value as a key pi could match (an object or array never equals another). */
function primitive(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? Symbol('object') : value;
}

function planPi(lines: SessionLines, context: PlanContext): RepairPlan {
  const detected = detectPi(lines);
  if (detected === null || !detected.supported) {
    return { kind: 'refuse', detail: 'not a pi session of a version repair knows' };
  }
  const tree = detected.version !== 'session v1';
  const walk = tree ? walkTree(lines) : walkInOrder(lines);
  if ('kind' in walk) return walk;
  if (walk.leafLine === 0) return { kind: 'clean', detail: 'the session has no entries yet' };
  if (walk.brokenLine !== undefined) {
    return { kind: 'refuse', detail: `line ${walk.brokenLine}: a message entry without a message` };
  }
  if (walk.assistantLine === undefined) {
    return {
      kind: 'clean',
      detail: 'no assistant message on the current branch: no tool call to answer',
    };
  }
  // The lines the plan needs, read again: the assistant message, the leaf, the results between.
  let assistant: Entry | undefined;
  let leaf: Entry | undefined;
  const answered = new Set<string>();
  let calls: Set<unknown> | undefined;
  for (const entry of entries(lines)) {
    if ('refuse' in entry) return entry.refuse;
    if (entry.line === walk.assistantLine) assistant = { value: entry.value, line: entry.line };
    if (entry.line === walk.leafLine) leaf = { value: entry.value, line: entry.line };
    const kind = kindOf(entry.value);
    if (!walk.onTheWay(entry.line, kind)) continue;
    const message = entry.value.message as Record<string, unknown>;
    // Only the assistant message's calls are asked about: results of others are not kept.
    calls ??= assistant === undefined ? undefined : callIdsOf(assistant);
    const id = message.toolCallId;
    if (typeof id === 'string' && (calls === undefined || calls.has(id))) answered.add(id);
  }
  if (assistant === undefined || leaf === undefined) {
    return { kind: 'refuse', detail: 'the session changed while it was read' };
  }
  const between: Entry | undefined =
    walk.betweenLine === undefined ? undefined : { value: {}, line: walk.betweenLine };
  return answerCalls({ assistant, answered, between, leaf, tree, used: walk.ids, context });
}

/** The ids of an assistant message's tool calls. */
function callIdsOf(assistant: Entry): Set<unknown> {
  const content = (assistant.value.message as Record<string, unknown>).content;
  const ids = new Set<unknown>();
  if (!Array.isArray(content)) return ids;
  for (const block of content as unknown[]) if (isObject(block)) ids.add(block.id);
  return ids;
}

/** The plan for the nearest assistant message's calls, once the walk back found it. */
function answerCalls(found: {
  assistant: Entry;
  answered: ReadonlySet<string>;
  between: Entry | undefined;
  leaf: Entry;
  tree: boolean;
  used: ReadonlyMap<unknown, number>;
  context: PlanContext;
}): RepairPlan {
  const { assistant, answered, between, context } = found;
  const message = assistant.value.message as Record<string, unknown>;
  const stopReason = message.stopReason;
  if (stopReason === 'aborted' || stopReason === 'error') {
    return {
      kind: 'clean',
      detail: `the last assistant message (line ${assistant.line}) ended with stopReason "${stopReason}": pi drops it, tool calls and all, when it sends the session, so there is no call to answer`,
    };
  }
  if (!Array.isArray(message.content)) {
    return {
      kind: 'refuse',
      detail: `line ${assistant.line}: an assistant message whose content is not a list of blocks`,
    };
  }
  const calls: UnansweredCall[] = [];
  const seen = new Set<string>();
  let made = 0;
  for (const block of message.content as unknown[]) {
    if (!isObject(block) || block.type !== 'toolCall') continue;
    made += 1;
    if (typeof block.id !== 'string' || block.id === '' || typeof block.name !== 'string') {
      return {
        kind: 'refuse',
        detail: `line ${assistant.line}: a tool call without a string id and name`,
      };
    }
    if (answered.has(block.id) || seen.has(block.id)) continue;
    seen.add(block.id);
    calls.push({ callId: block.id, toolName: block.name, line: assistant.line });
  }
  if (calls.length === 0) {
    return {
      kind: 'clean',
      detail:
        made === 0
          ? `the last assistant message (line ${assistant.line}) calls no tool`
          : `every tool call of the last assistant message (line ${assistant.line}) has a result`,
    };
  }
  if (between !== undefined) {
    return {
      kind: 'resumed',
      calls,
      told: 'pi told the model "No result provided" for each of them',
      detail: `${calls.length} tool call(s) of line ${assistant.line} have no result, but the session went on after them (line ${between.line}); pi answers them itself ("No result provided") where that message starts, and results appended after it would answer nothing`,
    };
  }

  const time = context.now.getTime();
  if (!Number.isFinite(time)) return { kind: 'refuse', detail: 'the clock gave no valid time' };
  if (!found.tree) {
    const timestamp = context.now.toISOString();
    const append = calls.map((call) =>
      JSON.stringify({ type: 'message', timestamp, message: resultMessage(call, time) }),
    );
    return { kind: 'repair', calls, append };
  }
  return chainedResults(found.used, found.leaf, calls, context);
}

/** The result entries of a tree session (v2, v3): fresh ids, chained from the last entry. */
function chainedResults(
  ids: ReadonlyMap<unknown, number>,
  leaf: Entry,
  calls: UnansweredCall[],
  context: PlanContext,
): RepairPlan {
  if (typeof leaf.value.id !== 'string') {
    return { kind: 'refuse', detail: `line ${leaf.line}: the last entry has no id to chain from` };
  }
  const time = context.now.getTime();
  const timestamp = context.now.toISOString();
  // The file's ids and this repair's: a fresh id is neither.
  const used = new Set<unknown>();
  const taken = (id: string) => ids.has(id) || used.has(id);
  const append: string[] = [];
  let parentId = leaf.value.id;
  for (const call of calls) {
    const id = freshId(taken, context);
    used.add(id);
    const message = resultMessage(call, time);
    append.push(JSON.stringify({ type: 'message', id, parentId, timestamp, message }));
    parentId = id;
  }
  return { kind: 'repair', calls, append };
}

/** The result pi writes for a tool that failed (`details: {}`), with our text. */
function resultMessage(call: UnansweredCall, time: number): Record<string, unknown> {
  return {
    role: RESULT_ROLE,
    toolCallId: call.callId,
    toolName: call.toolName,
    content: [{ type: 'text', text: INTERRUPTED_MESSAGE }],
    details: {},
    isError: true,
    timestamp: time,
  };
}

/**
 * The entries pi sends for a tree session (as indexes into `index`): the `parentId` path from
 * the root to `leaf`, as pi walks it (ids indexed last-wins, the walk stopping at a missing or
 * unknown parent), or why not.
 */
function pathTo(index: Index, leaf: number): number[] | string {
  const path: number[] = [];
  // One byte an entry marks the walk (a set of numbers would take some 60).
  const visited = new Uint8Array(index.lines.length);
  let current: number | undefined = leaf;
  while (current !== undefined) {
    if (visited[current] === 1) {
      return `line ${index.lines[current]}: the parentId chain loops; pi itself cannot load this session`;
    }
    visited[current] = 1;
    path.push(current);
    const parentId: unknown = index.parents[current];
    current = parentId ? index.byId.get(parentId) : undefined;
  }
  return path.reverse();
}

/** 8 hex digits, as pi's ids, not used by any entry of the file nor by this repair. */
function freshId(taken: (id: string) => boolean, context: PlanContext): string {
  const bytes = context.randomBytes(4);
  let value = 0;
  for (let index = 0; index < 4; index += 1) value = value * 256 + (bytes[index] ?? 0);
  // Stepping from the random start always ends: a file holds far fewer than 2^32 ids.
  for (;;) {
    const id = value.toString(16).padStart(8, '0');
    if (!taken(id)) return id;
    value = (value + 1) % 0x1_0000_0000;
  }
}
