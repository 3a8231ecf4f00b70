import { INTERRUPTED_MESSAGE } from '../revival/texts.ts';
import {
  type ForeignFormat,
  type ForeignLine,
  type FormatDetection,
  type PlanContext,
  type RepairPlan,
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

function detectPi(lines: readonly ForeignLine[]): FormatDetection | null {
  const header = lines[0]?.value;
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

function planPi(lines: readonly ForeignLine[], context: PlanContext): RepairPlan {
  const detected = detectPi(lines);
  if (detected === null || !detected.supported) {
    return { kind: 'refuse', detail: 'not a pi session of a version repair knows' };
  }
  const tree = detected.version !== 'session v1';
  const entries: Entry[] = [];
  for (const line of lines.slice(1)) {
    if (line.value === undefined) continue; // pi skips a line that is not JSON
    if (!isObject(line.value)) {
      return {
        kind: 'refuse',
        detail: `line ${line.number} is JSON but not a pi entry; pi itself cannot load this session`,
      };
    }
    if (line.value.type === 'session') continue; // pi skips a repeated header too
    entries.push({ value: line.value, line: line.number });
  }
  const leaf = entries.at(-1);
  if (leaf === undefined) return { kind: 'clean', detail: 'the session has no entries yet' };

  const path = tree ? pathTo(entries, leaf) : entries;
  if (typeof path === 'string') return { kind: 'refuse', detail: path };

  // Walk back from the leaf to the nearest assistant message, noting the results on the way and
  // whether anything pi sends as a message of its own (a user turn, a summary) comes between.
  const answered = new Set<string>();
  let between: Entry | undefined;
  let assistant: Entry | undefined;
  for (let index = path.length - 1; index >= 0; index -= 1) {
    const entry = path[index] as Entry;
    const { value } = entry;
    if (value.type === 'message') {
      const message = value.message;
      if (!isObject(message)) {
        return { kind: 'refuse', detail: `line ${entry.line}: a message entry without a message` };
      }
      if (message.role === 'assistant') {
        assistant = entry;
        break;
      }
      if (message.role === RESULT_ROLE) {
        if (typeof message.toolCallId === 'string') answered.add(message.toolCallId);
        continue;
      }
      between ??= entry;
    } else if (typeof value.type === 'string' && MESSAGE_ENTRY_TYPES.has(value.type)) {
      between ??= entry;
    }
  }
  if (assistant === undefined) {
    return {
      kind: 'clean',
      detail: 'no assistant message on the current branch: no tool call to answer',
    };
  }
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
  if (!tree) {
    const timestamp = context.now.toISOString();
    const append = calls.map((call) =>
      JSON.stringify({ type: 'message', timestamp, message: resultMessage(call, time) }),
    );
    return { kind: 'repair', calls, append };
  }
  return chainedResults(entries, leaf, calls, context);
}

/** The result entries of a tree session (v2, v3): fresh ids, chained from the last entry. */
function chainedResults(
  entries: readonly Entry[],
  leaf: Entry,
  calls: UnansweredCall[],
  context: PlanContext,
): RepairPlan {
  if (typeof leaf.value.id !== 'string') {
    return { kind: 'refuse', detail: `line ${leaf.line}: the last entry has no id to chain from` };
  }
  const time = context.now.getTime();
  const timestamp = context.now.toISOString();
  const used = new Set<string>();
  for (const entry of entries) if (typeof entry.value.id === 'string') used.add(entry.value.id);
  const append: string[] = [];
  let parentId = leaf.value.id;
  for (const call of calls) {
    const id = freshId(used, context);
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
 * The entries pi sends for a tree session: the `parentId` path from the root to `leaf`, as pi
 * walks it (ids indexed last-wins, the walk stopping at a missing or unknown parent), or why not.
 */
function pathTo(entries: readonly Entry[], leaf: Entry): Entry[] | string {
  const byId = new Map<unknown, Entry>();
  for (const entry of entries) byId.set(entry.value.id, entry);
  const path: Entry[] = [];
  const visited = new Set<Entry>();
  let current: Entry | undefined = leaf;
  while (current !== undefined) {
    if (visited.has(current)) {
      return `line ${current.line}: the parentId chain loops; pi itself cannot load this session`;
    }
    visited.add(current);
    path.push(current);
    const parentId: unknown = current.value.parentId;
    current = parentId ? byId.get(parentId) : undefined;
  }
  return path.reverse();
}

/** 8 hex digits, as pi's ids, not used by any entry of the file nor by this repair. */
function freshId(used: ReadonlySet<string>, context: PlanContext): string {
  const bytes = context.randomBytes(4);
  let value = 0;
  for (let index = 0; index < 4; index += 1) value = value * 256 + (bytes[index] ?? 0);
  // Stepping from the random start always ends: a file holds far fewer than 2^32 ids.
  for (;;) {
    const id = value.toString(16).padStart(8, '0');
    if (!used.has(id)) return id;
    value = (value + 1) % 0x1_0000_0000;
  }
}
