import {
  type ForeignFormat,
  type ForeignLine,
  type FormatDetection,
  neverThrowingFormat,
  type RepairPlan,
  type SessionLines,
} from './foreign-format.ts';
import { isObject, shown } from './untrusted-value.ts';

/*
 * The chat sessions of Gemini CLI (`@google/gemini-cli`,
 * `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`), append-only JSONL since 0.58.
 *
 * Records, as its loader reads them: a metadata record (`sessionId`, `projectHash`, `startTime`,
 * `lastUpdated`, `kind`; a later one merges into it); a message (`id`, `type`: `user`, `gemini`,
 * `info`, `error`, `warning`; `content`, and for `gemini` `thoughts`, `tokens`, `model`,
 * `toolCalls`) — a later message with the same id replaces the earlier one in its place; `{"$set":
 * {…}}` merges metadata, and a `$set` of `messages` replaces every message; `{"$rewindTo": id}`
 * drops that message and every later one (all of them when the id is unknown). A line that is not
 * JSON is skipped.
 *
 * Gemini CLI records a model turn when its stream ends — `content` the turn's text, a string —
 * and merges the turn's `toolCalls` (name, arguments, result) into that record only when the
 * calls finish. A turn cut off while a tool runs is therefore left as `{"type": "gemini",
 * "content": ""}` (or with only `thoughts`): the call's name, arguments and id are nowhere in the
 * file. (An empty model response is recorded differently, with `content` a list of parts.) On
 * resume Gemini CLI drops such an empty turn, and the model is never told that it ran something.
 *
 * The repair appends that record again, same id, every field kept, with `content` saying what is
 * known and nothing more: the turn was interrupted while the model may have been running a tool,
 * what it did is unknown, nothing was retried, check before assuming. Gemini CLI replaces the
 * empty record with it in place and sends it as the model's turn. A cut-off turn that also had
 * text cannot be told from a finished answer, and is left alone.
 */

/**
 * What the repair writes as a cut-off Gemini CLI turn's content.
 *
 * @example
 * const record = { id: 'm1', type: 'gemini', content: GEMINI_INTERRUPTED_TURN };
 */
export const GEMINI_INTERRUPTED_TURN =
  '[This turn was interrupted: the session ended while the model may have been running a tool. ' +
  'Gemini CLI records a tool call only when it finishes, so which call it was, and whether it ' +
  'took effect, is unknown. Nothing was retried: check the state of anything this turn may have ' +
  'been changing — a file may have been left half-written — before assuming either way.]';

/** The message types the tested versions write. */
const MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);

/**
 * Gemini CLI's JSONL chat sessions (tested with 0.61.0). `plan` re-appends a model turn cut off
 * while a tool ran — the last turn, `content: ""`, no `toolCalls` — with the same id and
 * {@link GEMINI_INTERRUPTED_TURN} as its content.
 *
 * @example
 * import { randomBytes } from 'node:crypto';
 * const detected = geminiFormat.detect(lines); // { format: 'gemini-cli', version: 'chat jsonl', supported: true }
 * const plan = geminiFormat.plan(lines, { now: new Date(), randomBytes });
 */
export const geminiFormat: ForeignFormat = neverThrowingFormat(
  'gemini-cli',
  'Gemini CLI session',
  detectGemini,
  planGemini,
);

function detectGemini(lines: SessionLines): FormatDetection | null {
  let first: unknown;
  for (const line of lines) {
    if (line.value === undefined) continue;
    first = line.value;
    break;
  }
  if (!isObject(first) || typeof first.sessionId !== 'string') return null;
  if (typeof first.projectHash !== 'string' || 'type' in first) return null;
  if (Array.isArray(first.messages)) {
    return {
      format: 'gemini-cli',
      version: 'legacy chat json',
      supported: false,
      reason:
        'a session in the single-object format of Gemini CLI before 0.58, which it rewrites whole; resume it once with Gemini CLI 0.61 (which migrates it to JSONL), then repair',
    };
  }
  if (first.kind !== undefined && first.kind !== 'main') {
    return {
      format: 'gemini-cli',
      version: `chat jsonl (${shown(first.kind)})`,
      supported: false,
      reason: 'only main sessions were tested (a subagent session is resumed by its parent)',
    };
  }
  return { format: 'gemini-cli', version: 'chat jsonl', supported: true };
}

/*
 * What the plan keeps of a message, packed in one number: the line of its last record (times
 * 8), whether it is a turn (user or gemini), whether it is a turn cut off in a tool, and whether
 * it came in a `$set` of `messages` (its record is then inside that line). Nothing else of it is
 * kept: the last turn's record is read again when it is the one repaired.
 */
const TURN = 1;
const CUT = 2;
const FROM_SET = 4;

function packed(value: Record<string, unknown>, line: number, fromSet: boolean): number {
  const turn = value.type === 'user' || value.type === 'gemini';
  return line * 8 + (turn ? TURN : 0) + (cutOff(value) ? CUT : 0) + (fromSet ? FROM_SET : 0);
}

function planGemini(lines: SessionLines): RepairPlan {
  // Message ids, in the loader's order, to what is kept of each: the last record wins.
  const messages = new Map<string, number>();
  for (const line of lines) {
    const record = line.value;
    if (record === undefined) continue; // Gemini CLI skips a line that is not JSON
    if (!isObject(record)) return unknownRecord(line);
    if (typeof record.$rewindTo === 'string') {
      rewind(messages, record.$rewindTo);
    } else if (typeof record.id === 'string') {
      if (typeof record.type !== 'string' || !MESSAGE_TYPES.has(record.type)) {
        return {
          kind: 'refuse',
          detail: `line ${line.number}: a message of type ${shown(record.type)}, which the tested versions do not write`,
        };
      }
      messages.set(record.id, packed(record, line.number, false));
    } else if (isObject(record.$set)) {
      if (Array.isArray(record.$set.messages)) {
        messages.clear();
        for (const message of record.$set.messages as unknown[]) {
          if (isObject(message) && typeof message.id === 'string') {
            messages.set(message.id, packed(message, line.number, true));
          }
        }
      }
    } else if (typeof record.sessionId !== 'string' || typeof record.projectHash !== 'string') {
      return unknownRecord(line);
    }
  }
  let last: [string, number] | undefined;
  let earlier: number | undefined;
  for (const entry of messages) {
    if ((entry[1] & TURN) === 0) continue;
    if (last !== undefined && (last[1] & CUT) !== 0) earlier ??= Math.floor(last[1] / 8);
    last = entry;
  }
  if (last === undefined) return { kind: 'clean', detail: 'the session has no turns yet' };
  if ((last[1] & CUT) === 0) {
    return {
      kind: 'clean',
      detail:
        earlier === undefined
          ? 'the last turn was not cut off in a tool'
          : `the turn of line ${earlier} was cut off in a tool, but the session went on after it`,
    };
  }
  const [id, code] = last;
  const lineNumber = Math.floor(code / 8);
  const value = recordOf(lines, lineNumber, id, (code & FROM_SET) !== 0);
  if (value === undefined || !cutOff(value)) {
    return { kind: 'refuse', detail: 'the session changed while it was read' };
  }
  return {
    kind: 'repair',
    calls: [{ callId: id, toolName: '(not recorded)', line: lineNumber }],
    append: [JSON.stringify({ ...value, content: GEMINI_INTERRUPTED_TURN })],
  };
}

/** The record of message `id` on line `number`, read again (inside a `$set` when it came so). */
function recordOf(
  lines: SessionLines,
  number: number,
  id: string,
  fromSet: boolean,
): Record<string, unknown> | undefined {
  for (const line of lines) {
    if (line.number !== number) continue;
    const record = line.value;
    if (!isObject(record)) return undefined;
    if (!fromSet) return record;
    const set = record.$set;
    if (!isObject(set) || !Array.isArray(set.messages)) return undefined;
    let found: Record<string, unknown> | undefined;
    for (const message of set.messages as unknown[]) {
      if (isObject(message) && message.id === id) found = message;
    }
    return found;
  }
  return undefined;
}

/** A model turn recorded when its stream ended but never completed with its tool calls. */
function cutOff(value: Record<string, unknown>): boolean {
  if (value.type !== 'gemini' || value.content !== '') return false;
  return !Array.isArray(value.toolCalls) || value.toolCalls.length === 0;
}

/** `$rewindTo`: drop the message and every later one; all of them when the id is unknown. */
function rewind(messages: Map<string, number>, id: string): void {
  if (!messages.has(id)) {
    messages.clear();
    return;
  }
  let found = false;
  for (const key of [...messages.keys()]) {
    if (key === id) found = true;
    if (found) messages.delete(key);
  }
}

function unknownRecord(line: ForeignLine): RepairPlan {
  return {
    kind: 'refuse',
    detail: `line ${line.number}: a record that is not one the tested versions of Gemini CLI write`,
  };
}
