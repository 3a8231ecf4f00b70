import { INTERRUPTED_MESSAGE } from '../revival/texts.ts';
import {
  type ForeignFormat,
  type FormatDetection,
  type PlanContext,
  type RepairPlan,
  type SessionLines,
  type UnansweredCall,
  neverThrowingFormat,
} from './foreign-format.ts';
import { releaseDetection } from './release-detection.ts';
import { isObject, shown } from './untrusted-value.ts';

/*
 * The session files of Claude Code (`@anthropic-ai/claude-code`,
 * `~/.claude/projects/<cwd, every / and . as ->/<sessionId>.jsonl`).
 *
 * Every message line has an envelope: `type` (`user`, `assistant`, `attachment`, `system`),
 * `uuid`, `parentUuid` (null at a root), `isSidechain`, `userType`, `entrypoint`, `cwd`,
 * `sessionId`, `version` (the CLI's), `gitBranch`, `timestamp`, sometimes `slug`, `promptId`,
 * `agentId`. Other lines (`queue-operation`, `last-prompt`, `mode`, `file-history-snapshot`,
 * `summary`, …) carry no message. A streamed assistant message is written one line per content
 * block, every line with the same `message.id`, each parented on the one before; a tool's result
 * is a `user` line whose `message.content` is one `tool_result` block, with a top-level
 * `toolUseResult` (`"Error: …"` when the tool failed) and `sourceToolAssistantUUID` (the line of
 * the call), written when the tool finishes.
 *
 * When Claude Code opens a session it keeps the message lines by `uuid`, folds `progress` lines
 * out of the chain, and takes the newest non-sidechain message as the leaf — unless a
 * `last-prompt` line names another leaf the newest message does not descend from. It sends the
 * `parentUuid` path from the leaf back to the root (a compaction boundary is a root), gathering
 * the lines of each assistant message by `message.id`. A call whose result is missing is dropped
 * from what it sends, silently: the model never learns that its call may have half-happened.
 *
 * The repair appends, for every call of the last assistant message on that path that has no
 * result anywhere after it, the `user` line Claude Code writes for a failed tool, with our honest
 * text, chained from the newest message so that it is on the path Claude Code sends.
 */

/** The line types Claude Code keeps as messages of the conversation tree. */
const MESSAGE_TYPES = new Set(['user', 'assistant', 'attachment', 'system']);

/** Envelope fields copied, in Claude Code's own order, from the line of the call. */
const LEADING_FIELDS = ['isSidechain', 'teamName', 'agentName'] as const;
const TRAILING_FIELDS = [
  'sessionKind',
  'userType',
  'entrypoint',
  'cwd',
  'sessionId',
  'version',
  'gitBranch',
  'slug',
] as const;

/** How many fresh uuids may collide with the file's before the plan gives up. */
const MAX_UUID_TRIES = 64;

/**
 * A message line as the plan keeps it, without its text: its uuid, its parent after `progress`
 * lines are folded out (null at a root; a parent's uuid held once), its line and what kind of
 * line it is. The few lines the plan needs whole are read again.
 */
interface Message {
  uuid: string;
  parent: string | null;
  line: number;
  bits: number;
}

/** {@link Message.bits}: the line's type, whether it is a sidechain's, and what a user line carries. */
const ASSISTANT = 1;
const USER = 2;
const SIDECHAIN = 4;
/** A user line that only carries tool results. */
const RESULTS_ONLY = 8;
/** A user line with a `promptId`. */
const PROMPTED = 16;
/** On the path Claude Code resumes (set by {@link pathFrom}). */
const ON_PATH = 32;

function bitsOf(value: Record<string, unknown>): number {
  let bits = value.isSidechain === true ? SIDECHAIN : 0;
  if (value.type === 'assistant') bits |= ASSISTANT;
  if (value.type === 'user') {
    bits |= USER;
    if (isResultLine(value)) bits |= RESULTS_ONLY;
    if (typeof value.promptId === 'string') bits |= PROMPTED;
  }
  return bits;
}

const isAssistant = (message: Message) => (message.bits & ASSISTANT) !== 0;

/** A line read again whole: its value and its number. */
interface Whole {
  value: Record<string, unknown>;
  line: number;
  uuid: string;
}

/**
 * Claude Code's session format, as releases 1.0.98 to 2.1.332 write it (each of 1.0.98,
 * 2.1.197 and 2.1.332 wrote sessions that were killed mid-tool, repaired and resumed by the same
 * release: `TESTED_RELEASES`). `plan` answers every tool call of the
 * last assistant message on the conversation path Claude Code resumes that has no result, with
 * one `user` line per call in Claude Code's own shape for a failed tool (`is_error: true`, the
 * text revival uses, `toolUseResult: "Error: …"`, `sourceToolAssistantUUID`), chained from the
 * newest message. It never writes an assistant line.
 *
 * @example
 * import { randomBytes } from 'node:crypto';
 * const detected = claudeCodeFormat.detect(lines); // { format: 'claude-code', version: '2.1.197', supported: true }
 * const plan = claudeCodeFormat.plan(lines, { now: new Date(), randomBytes });
 * if (plan.kind === 'repair') for (const line of plan.append) console.log(line);
 */
export const claudeCodeFormat: ForeignFormat = neverThrowingFormat(
  'claude-code',
  'Claude Code session',
  detectClaudeCode,
  planClaudeCode,
);

/** A message line as Claude Code writes every one of them. */
function hasEnvelope(value: unknown): value is Record<string, unknown> {
  return (
    isObject(value) &&
    typeof value.type === 'string' &&
    MESSAGE_TYPES.has(value.type) &&
    typeof value.uuid === 'string' &&
    (value.parentUuid === null || typeof value.parentUuid === 'string') &&
    typeof value.sessionId === 'string' &&
    typeof value.version === 'string'
  );
}

function detectClaudeCode(lines: SessionLines): FormatDetection | null {
  let found = false;
  // Each version once, in the order last written (a file alternating two holds two).
  const versions = new Set<string>();
  const session: { id?: string; cwd?: string } = {};
  for (const line of lines) {
    const value = line.value;
    if (hasEnvelope(value)) {
      found = true;
      session.id = value.sessionId as string;
      if (typeof value.cwd === 'string') session.cwd = value.cwd;
    }
    if (isObject(value) && typeof value.version === 'string' && typeof value.uuid === 'string') {
      const version = shownVersion(value.version);
      versions.delete(version);
      versions.add(version);
    }
  }
  if (!found || versions.size === 0) return null;
  // A session resumed by another release holds lines of both: each must be in the range.
  return releaseDetection('claude-code', [...versions], session);
}

/** The file as Claude Code's loader reads it, without the lines' text. */
interface Loaded {
  messages: Map<string, Message>;
  /** `progress` lines, folded out of the chain: their uuid to the parent they stand for. */
  folded: Map<string, string | null>;
  /** The newest message of the main conversation. */
  newest: Message | undefined;
  /** The newest sidechain message (a subagent's transcript is all sidechain). */
  newestSidechain: Message | undefined;
  named: string | undefined;
  namedExplicitly: boolean;
  cleared: boolean;
}

/** What Claude Code tells the model of calls it resumed past without their results. */
const DROPPED =
  'Claude Code dropped the calls silently when it resumed: the model was never told of them';

function planClaudeCode(lines: SessionLines, context: PlanContext): RepairPlan {
  const detected = detectClaudeCode(lines);
  // A newer release is planned for; repairSession decides (allowNewer, seen shapes).
  if (detected === null || (!detected.supported && detected.newerThan === undefined)) {
    return { kind: 'refuse', detail: 'not a Claude Code session of a version repair knows' };
  }
  const loaded = loadMessages(lines);
  if ('kind' in loaded) return loaded;
  // A subagent's transcript (every message a sidechain's) is repaired as its own conversation:
  // the parent's Task call waits on it.
  const sidechain = loaded.newest === undefined;
  const leaf = loaded.newest ?? loaded.newestSidechain;
  if (leaf === undefined) return { kind: 'clean', detail: 'the session has no messages yet' };
  if (!sidechain && loaded.cleared) {
    return {
      kind: 'clean',
      detail:
        'the conversation was cleared after its last message: Claude Code resumes it empty, so there is no call to answer',
    };
  }
  const { path, broken } = pathFrom(loaded.messages, leaf);
  const named = sidechain ? null : namedElsewhere(loaded, leaf, path);
  if (named !== null) return named;
  const cutOff = lastCalls(lines, loaded, path, broken, sidechain);
  if (cutOff.kind !== 'calls')
    return cutOff.kind === 'plan' ? cutOff.plan : dropped(lines, loaded, sidechain, cutOff.detail);
  const { assistant, unanswered, sources, last } = cutOff;
  // After the message, the path may hold its other lines, results, attachments and system
  // lines; a user turn means the conversation went on without the results.
  for (const message of path.slice(last + 1)) {
    if ((message.bits & USER) === 0 || (message.bits & RESULTS_ONLY) !== 0) continue;
    return {
      kind: 'resumed',
      calls: unanswered,
      told: DROPPED,
      detail: `${unanswered.length} tool call(s) of line ${assistant.line} have no result, but the conversation went on after them (line ${message.line}); results appended now would not follow the calls`,
    };
  }
  const multiple = oneCallOnly(unanswered, sources);
  if (multiple !== null) return multiple;
  const time = context.now.getTime();
  if (!Number.isFinite(time)) return { kind: 'refuse', detail: 'the clock gave no valid time' };
  const uuids = freshUuids(lines, loaded, unanswered.length, context);
  if (uuids === null) {
    return {
      kind: 'refuse',
      detail: 'no fresh uuid: the random source keeps repeating uuids of the file',
    };
  }
  const append: string[] = [];
  const prompt = promptOf(lines, path.slice(0, last));
  const fields = { timestamp: context.now.toISOString(), promptId: prompt };
  let parentUuid = leaf.uuid;
  for (const [index, call] of unanswered.entries()) {
    const uuid = uuids[index] as string;
    const source = sources.get(call.callId) as Whole;
    append.push(JSON.stringify(resultLine(source, call, { ...fields, parentUuid, uuid })));
    parentUuid = uuid;
  }
  return { kind: 'repair', calls: unanswered, append };
}

/**
 * Claude Code 1.x, resuming a message whose several tool calls were answered by the lines the
 * repair appends, sends the first call and its result and drops the others (seen with 1.0.98):
 * such a session is refused rather than repaired into one that tells the model of one call.
 */
function oneCallOnly(
  unanswered: readonly UnansweredCall[],
  sources: ReadonlyMap<string, Whole>,
): RepairPlan | null {
  if (unanswered.length < 2) return null;
  const versions = unanswered.map((call) => sources.get(call.callId)?.value.version);
  const old = versions.find((version) => typeof version === 'string' && version.startsWith('1.'));
  if (old === undefined) return null;
  return {
    kind: 'refuse',
    detail: `${unanswered.length} tool calls of one message were cut off in a session of Claude Code ${shownVersion(String(old))}: resumed, Claude Code 1.x sends only the first call and its result, so the model would not be told of the others (tested with 1.0.98); one call at a time is repaired`,
  };
}

/**
 * Read the file as Claude Code's loader does: messages by uuid (last wins), `progress` lines
 * folded out of the chain, the newest non-sidechain message as the leaf, `last-prompt` lines
 * naming the leaf a session was left at. One pass, keeping of each message line only its
 * {@link Message}.
 */
function loadMessages(lines: SessionLines): Loaded | RepairPlan {
  const loaded: Loaded = {
    messages: new Map(),
    folded: new Map(),
    newest: undefined,
    newestSidechain: undefined,
    named: undefined,
    namedExplicitly: false,
    cleared: false,
  };
  const { folded } = loaded;
  for (const line of lines) {
    if (line.value === undefined) continue; // not JSON: Claude Code skips it
    const value = line.value;
    if (!isObject(value)) {
      return {
        kind: 'refuse',
        detail: `line ${line.number} is JSON but not an object; Claude Code itself cannot load this session`,
      };
    }
    const parentField = value.parentUuid;
    if (value.type === 'progress' && typeof value.uuid === 'string') {
      const parent = typeof parentField === 'string' ? held(loaded, parentField) : null;
      folded.set(
        value.uuid,
        parent !== null && folded.has(parent) ? (folded.get(parent) ?? null) : parent,
      );
      continue;
    }
    if (typeof value.type === 'string' && MESSAGE_TYPES.has(value.type)) {
      const refused = loadMessage(loaded, line.number, value);
      if (refused !== null) return refused;
      continue;
    }
    if (value.type === 'last-prompt') lastPrompt(loaded, value);
  }
  return loaded;
}

/** The copy of a uuid already held (a message's), so a parent's uuid is held once. */
function held(loaded: Loaded, uuid: string): string {
  return loaded.messages.get(uuid)?.uuid ?? uuid;
}

/** One message line into the loader's state, or why Claude Code could not load it. */
function loadMessage(
  loaded: Loaded,
  number: number,
  value: Record<string, unknown>,
): RepairPlan | null {
  if (typeof value.uuid !== 'string' || value.uuid === '') {
    return {
      kind: 'refuse',
      detail: `line ${number}: a ${shown(value.type)} message without a uuid, which Claude Code always writes`,
    };
  }
  const parentField = value.parentUuid;
  if (parentField !== null && parentField !== undefined && typeof parentField !== 'string') {
    return {
      kind: 'refuse',
      detail: `line ${number}: a parentUuid that is neither a uuid nor null`,
    };
  }
  let parent =
    typeof parentField === 'string' && parentField !== '' ? held(loaded, parentField) : null;
  if (parent !== null && loaded.folded.has(parent)) parent = loaded.folded.get(parent) ?? null;
  const message: Message = { uuid: value.uuid, parent, line: number, bits: bitsOf(value) };
  loaded.messages.set(value.uuid, message);
  if (value.isSidechain === true) {
    loaded.newestSidechain = message;
  } else {
    loaded.newest = message;
    loaded.namedExplicitly = false;
    loaded.cleared = false;
  }
  if (value.type === 'system' && value.subtype === 'compact_boundary') {
    loaded.named = undefined;
    loaded.namedExplicitly = false;
  }
  return null;
}

/** A `last-prompt` line: the leaf a session was left at, or a clear. */
function lastPrompt(loaded: Loaded, value: Record<string, unknown>): void {
  if (typeof value.leafUuid === 'string' && value.leafUuid !== '') {
    loaded.namedExplicitly =
      value.explicit === true || (loaded.namedExplicitly && value.leafUuid === loaded.named);
    loaded.named = value.leafUuid;
    loaded.cleared = false;
  } else if (value.leafUuid === null && value.explicit === true) {
    loaded.cleared = true;
    loaded.named = undefined;
    loaded.namedExplicitly = false;
  }
}

/**
 * A refusal when a `last-prompt` line points Claude Code at another leaf: it resumes the leaf a
 * `last-prompt` line names unless the newest message descends from it (and always when it was
 * named explicitly, by a rewind).
 */
function namedElsewhere(
  loaded: Loaded,
  leaf: Message,
  path: readonly Message[],
): RepairPlan | null {
  const named = loaded.named;
  if (named === undefined || named === leaf.uuid || !loaded.messages.has(named)) return null;
  if (!loaded.namedExplicitly && path.some((message) => message.uuid === named)) return null;
  return {
    kind: 'refuse',
    detail: `a last-prompt line points Claude Code at another branch (message ${shown(named)}) than the newest message (line ${leaf.line}); results chained from the newest would not be on the conversation it resumes`,
  };
}

type CutOff =
  | {
      kind: 'calls';
      assistant: Message;
      /** Its index on the path. */
      last: number;
      unanswered: UnansweredCall[];
      sources: Map<string, Whole>;
    }
  | { kind: 'plan'; plan: RepairPlan }
  /** Nothing cut off on the path: `detail` says why (the file may still hold dropped calls). */
  | { kind: 'none'; detail: string };

/** The calls of the last assistant message on the path that have no result anywhere after it. */
function lastCalls(
  lines: SessionLines,
  loaded: Loaded,
  path: readonly Message[],
  broken: string | undefined,
  sidechain: boolean,
): CutOff {
  const last = path.findLastIndex(isAssistant);
  if (last === -1) {
    // Above a break Claude Code guesses; only what lies below one is certain.
    if (broken !== undefined) return { kind: 'plan', plan: { kind: 'refuse', detail: broken } };
    return {
      kind: 'none',
      detail: 'no assistant message on the conversation path: no tool call to answer',
    };
  }
  const assistant = path[last] as Message;
  const whole = wholeLines(lines, loaded, (line) => line === assistant.line).get(assistant.line);
  if (whole === undefined || !isObject(whole.value.message)) {
    return {
      kind: 'plan',
      plan: {
        kind: 'refuse',
        detail: `line ${assistant.line}: an assistant line without a message`,
      },
    };
  }
  const group = messageLines(lines, loaded, whole, sidechain);
  const made = toolCalls(group);
  if (!Array.isArray(made)) return { kind: 'plan', plan: made };
  if (made.length === 0) {
    return {
      kind: 'none',
      detail: `the last assistant message (line ${assistant.line}) calls no tool`,
    };
  }
  const sources = new Map(made.map((call) => [call.callId, call.source]));
  const calls = made.map(({ callId, toolName, line }) => ({ callId, toolName, line }));
  const asked = new Set(calls.map((call) => call.callId));
  const answered = resultsAfter(lines, (group[0] as Whole).line, sidechain, asked);
  const unanswered = calls.filter((call) => !answered.has(call.callId));
  if (unanswered.length === 0) {
    return {
      kind: 'none',
      detail: `every tool call of the last assistant message (line ${assistant.line}) has a result`,
    };
  }
  return { kind: 'calls', assistant, last, unanswered, sources };
}

/**
 * The message lines (each the winning line of its uuid) that `wanted` asks for, read again
 * whole: one pass, keeping only those.
 */
function wholeLines(
  lines: SessionLines,
  loaded: Loaded,
  wanted: (line: number, value: Record<string, unknown>) => boolean,
): Map<number, Whole> {
  const found = new Map<number, Whole>();
  for (const line of lines) {
    const value = line.value;
    if (!isObject(value) || typeof value.uuid !== 'string') continue;
    if (loaded.messages.get(value.uuid)?.line !== line.number) continue;
    if (wanted(line.number, value)) {
      found.set(line.number, { value, line: line.number, uuid: value.uuid });
    }
  }
  return found;
}

/**
 * Every line of an assistant message (a crash can cut the group after any block): the same
 * `message.id`, of the same conversation (main or sidechain), in file order.
 */
function messageLines(
  lines: SessionLines,
  loaded: Loaded,
  assistant: Whole,
  sidechain: boolean,
): Whole[] {
  const messageId = (assistant.value.message as Record<string, unknown>).id;
  if (typeof messageId !== 'string' || messageId === '') return [assistant];
  const group = [
    ...wholeLines(
      lines,
      loaded,
      (_, value) =>
        value.type === 'assistant' &&
        (value.isSidechain === true) === sidechain &&
        isObject(value.message) &&
        value.message.id === messageId,
    ).values(),
  ];
  if (!group.some((line) => line.line === assistant.line)) group.push(assistant);
  return group.sort((a, b) => a.line - b.line);
}

/** The tool calls of a message's lines, each once, or why they cannot be read. */
function toolCalls(group: readonly Whole[]): (UnansweredCall & { source: Whole })[] | RepairPlan {
  const calls: (UnansweredCall & { source: Whole })[] = [];
  for (const message of group) {
    const content = (message.value.message as Record<string, unknown>).content;
    if (typeof content === 'string') continue;
    if (!Array.isArray(content)) {
      return {
        kind: 'refuse',
        detail: `line ${message.line}: an assistant message whose content is not text or a list of blocks`,
      };
    }
    for (const block of content as unknown[]) {
      if (!isObject(block) || block.type !== 'tool_use') continue;
      if (typeof block.id !== 'string' || block.id === '' || typeof block.name !== 'string') {
        return {
          kind: 'refuse',
          detail: `line ${message.line}: a tool_use block without a string id and name`,
        };
      }
      if (calls.some((call) => call.callId === block.id)) continue;
      calls.push({ callId: block.id, toolName: block.name, line: message.line, source: message });
    }
  }
  return calls;
}

/**
 * Which of the `asked` call ids a `tool_result` after line `after` answers, in the same
 * conversation (one pass; results of other calls are not kept).
 */
function resultsAfter(
  lines: SessionLines,
  after: number,
  sidechain: boolean,
  asked: ReadonlySet<string>,
): Set<string> {
  const answered = new Set<string>();
  for (const line of lines) {
    if (line.number <= after || !isObject(line.value)) continue;
    const value = line.value;
    if (value.type !== 'user' || (value.isSidechain === true) !== sidechain) continue;
    if (!isObject(value.message) || !Array.isArray(value.message.content)) continue;
    for (const block of value.message.content as unknown[]) {
      if (
        isObject(block) &&
        block.type === 'tool_result' &&
        typeof block.tool_use_id === 'string' &&
        asked.has(block.tool_use_id)
      ) {
        answered.add(block.tool_use_id);
      }
    }
  }
  return answered;
}

/**
 * Nothing is cut off on the path Claude Code resumes — but a call without a result left off
 * that path (on the branch it resumed around, or before a compaction) means the session was
 * resumed without a repair, and the call dropped: said so, not "clean". Two passes: the calls
 * of the assistant messages off the path, then their results.
 */
function dropped(
  lines: SessionLines,
  loaded: Loaded,
  sidechain: boolean,
  detail: string,
): RepairPlan {
  const made: UnansweredCall[] = [];
  for (const line of lines) {
    const value = line.value;
    if (!isObject(value) || typeof value.uuid !== 'string' || value.type !== 'assistant') continue;
    const message = loaded.messages.get(value.uuid);
    if (message?.line !== line.number || (message.bits & ON_PATH) !== 0) continue;
    if ((value.isSidechain === true) !== sidechain || !isObject(value.message)) continue;
    const calls = toolCalls([{ value, line: line.number, uuid: value.uuid }]);
    if (!Array.isArray(calls)) continue;
    for (const { callId, toolName, line: at } of calls) made.push({ callId, toolName, line: at });
  }
  const answered =
    made.length === 0
      ? new Set<string>()
      : resultsAfter(lines, 0, sidechain, new Set(made.map((call) => call.callId)));
  const calls = made.filter((call) => !answered.has(call.callId));
  if (calls.length === 0) return { kind: 'clean', detail };
  calls.sort((a, b) => a.line - b.line);
  return {
    kind: 'resumed',
    calls,
    told: DROPPED,
    detail: `${calls.length} tool call(s) (the first on line ${(calls[0] as UnansweredCall).line}) have no result and are off the conversation Claude Code resumes: it resumed around them; results appended now would not be on that conversation`,
  };
}

/**
 * The line Claude Code 2.1 writes for a tool that failed, in its key order, with our text: the
 * envelope of the call's own line, `parentUuid` chaining it, `toolUseResult: "Error: …"`.
 */
function resultLine(
  source: Whole,
  call: UnansweredCall,
  fields: { parentUuid: string; uuid: string; timestamp: string; promptId: string | undefined },
): Record<string, unknown> {
  const line: Record<string, unknown> = { parentUuid: fields.parentUuid };
  for (const key of LEADING_FIELDS) copyField(line, source.value, key);
  if (fields.promptId !== undefined) line.promptId = fields.promptId;
  copyField(line, source.value, 'agentId');
  line.type = 'user';
  line.message = {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        content: INTERRUPTED_MESSAGE,
        is_error: true,
        tool_use_id: call.callId,
      },
    ],
  };
  line.uuid = fields.uuid;
  line.timestamp = fields.timestamp;
  line.toolUseResult = `Error: ${INTERRUPTED_MESSAGE}`;
  line.sourceToolAssistantUUID = source.uuid;
  for (const key of TRAILING_FIELDS) copyField(line, source.value, key);
  return line;
}

/** Copy an envelope field when it holds what Claude Code writes there (a string or boolean). */
function copyField(target: Record<string, unknown>, from: Record<string, unknown>, key: string) {
  const value = from[key];
  if (typeof value === 'string' || typeof value === 'boolean') target[key] = value;
}

/** A user line that only carries tool results. */
function isResultLine(value: Record<string, unknown>): boolean {
  const message = value.message;
  if (!isObject(message) || !Array.isArray(message.content)) return false;
  const content = message.content as unknown[];
  return (
    content.length > 0 && content.every((block) => isObject(block) && block.type === 'tool_result')
  );
}

/**
 * The `promptId` of the user turn the message answers (the latest one on the path before it),
 * read again from its line.
 */
function promptOf(lines: SessionLines, before: readonly Message[]): string | undefined {
  const prompted = before.findLast((message) => (message.bits & PROMPTED) !== 0);
  if (prompted === undefined) return undefined;
  for (const line of lines) {
    if (line.number !== prompted.line) continue;
    const value = line.value;
    return isObject(value) && typeof value.promptId === 'string' ? value.promptId : undefined;
  }
  return undefined;
}

/**
 * The messages Claude Code sends for `leaf`: the `parentUuid` path back to a root, oldest
 * first. Where the path breaks (a parent that is not in the file, a loop) Claude Code guesses
 * the rest; `broken` then says where, and `path` holds what lies below the break.
 */
function pathFrom(
  messages: ReadonlyMap<string, Message>,
  leaf: Message,
): { path: Message[]; broken?: string } {
  const path: Message[] = [];
  let broken: string | undefined;
  let current: Message | undefined = leaf;
  while (current !== undefined) {
    // Marked on the message itself (a set of uuids would take some 60 bytes a message).
    if ((current.bits & ON_PATH) !== 0) {
      broken = `line ${current.line}: the parentUuid chain loops; Claude Code would resume part of it`;
      break;
    }
    current.bits |= ON_PATH;
    path.push(current);
    if (current.parent === null) break;
    const parent = messages.get(current.parent);
    if (parent === undefined) {
      broken = `line ${current.line}: its parentUuid names no message of the file; Claude Code would guess the rest of the conversation from timestamps`;
    }
    current = parent;
  }
  path.reverse();
  return broken === undefined ? { path } : { path, broken };
}

/**
 * `count` uuids v4 (RFC 9562) from the context's random bytes, none used by any line of the
 * file nor by another of them: checked against the messages and `progress` lines held, then by
 * a pass over the file for any other line's `uuid`. Null when the random source keeps
 * repeating them.
 */
function freshUuids(
  lines: SessionLines,
  loaded: Loaded,
  count: number,
  context: PlanContext,
): string[] | null {
  const refused = new Set<string>();
  const taken = (uuid: string) =>
    loaded.messages.has(uuid) || loaded.folded.has(uuid) || refused.has(uuid);
  const uuids: string[] = [];
  let tries = 0;
  for (;;) {
    while (uuids.length < count) {
      const uuid = randomUuid(context);
      tries += 1;
      if (!taken(uuid) && !uuids.includes(uuid)) uuids.push(uuid);
      else if (tries >= MAX_UUID_TRIES * count) return null;
    }
    const fresh = new Set(uuids);
    for (const line of lines) {
      const uuid = isObject(line.value) ? line.value.uuid : undefined;
      if (typeof uuid === 'string' && fresh.has(uuid)) refused.add(uuid);
    }
    if (refused.size === 0 || uuids.every((uuid) => !refused.has(uuid))) return uuids;
    for (let index = uuids.length - 1; index >= 0; index -= 1) {
      if (refused.has(uuids[index] as string)) uuids.splice(index, 1);
    }
  }
}

function randomUuid(context: PlanContext): string {
  const source = context.randomBytes(16);
  const bytes = Array.from({ length: 16 }, (_, index) => source[index] ?? 0);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A version string from the file, safe to show: control characters escaped, cut short. */
function shownVersion(version: string): string {
  const text = JSON.stringify(version).slice(1, -1);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
