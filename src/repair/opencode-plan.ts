import { INTERRUPTED_MESSAGE } from '../revival/texts.ts';
import type { FormatDetection, PlanContext, UnansweredCall } from './foreign-format.ts';
import { releaseVerdict, TESTED_RELEASES } from './tested-releases.ts';
import { isObject, shown } from './untrusted-value.ts';

/*
 * opencode (`opencode-ai`) keeps every session in one SQLite database,
 * `$XDG_DATA_HOME/opencode/opencode.db`. The `part` table holds each message's parts (`data`:
 * the part as JSON, without its `id`, `sessionID` and `messageID`, which are columns); a tool
 * call is a part `{"type":"tool","tool","callID","state"}` whose `state.status` goes `pending` →
 * `running` → `completed` | `error`. The tables are projections of a durable event log: each
 * change of a part is also an `event` row (`type: "message.part.updated.1"`, `data:
 * {sessionID, part, time}`) numbered by a per-session sequence (`event_sequence.seq`, the
 * session's id as `aggregate_id`), written in the same transaction as the projection.
 *
 * A killed opencode leaves its tool parts `pending` or `running` for ever; on resume it sends
 * such a call with "[Tool execution was interrupted]" and never writes that down. The repair
 * does what opencode's own `failToolCall` does for a tool that failed: the part's state becomes
 * `{status: "error", input, error, metadata, time: {start, end}}`, here with our interrupted
 * text as the error, which opencode then sends as the call's error result; and, as its event
 * writer does, it records the change as the session's next `message.part.updated.1` event, so
 * the log and the projection agree.
 */

/**
 * The opencode versions whose databases the real-client test repaired and resumed, oldest
 * first: a session written by a release between the first and the last is accepted. The first
 * is the oldest the registry serves that keeps sessions as the others do. 1.17.11, the release
 * before it, has the same schema but also writes each session into `session_message`
 * (opencode's next session model, which the repair refuses); releases before that stop at an
 * older migration, and the first start of 1.17.11 or later empties what they logged
 * (migrations `reset_v2_session_state` and `simplify_session_input`).
 *
 * @example
 * const tested = OPENCODE_TESTED.includes('1.18.33'); // true
 */
export const OPENCODE_TESTED: readonly string[] = TESTED_RELEASES.opencode;

/**
 * The newest schema migration of the tested versions (all of them have it): a database
 * migrated further was written by an opencode this repair has not seen, whose tables may mean
 * something else; one not migrated as far was last opened by an opencode older than the
 * tested ones, whose event log was another.
 *
 * @example
 * const newer = '20270101000000_next' > OPENCODE_NEWEST_MIGRATION; // true: refused
 */
export const OPENCODE_NEWEST_MIGRATION = '20260622202450_simplify_session_input';

/**
 * The event type (with its version) opencode writes when a part changes.
 *
 * @example
 * db.prepare('SELECT data FROM event WHERE type = ?').all(PART_UPDATED_EVENT);
 */
export const PART_UPDATED_EVENT = 'message.part.updated.1';

/**
 * What the repair reads of an opencode database: its migrations, its sessions' versions, the
 * tool parts left `pending` or `running`, the event sequence of their sessions, and which of
 * those sessions have rows in `session_message` (opencode's next session model).
 *
 * @example
 * const rows: OpencodeRows = { migrations: [], sessions: [], parts: [], sequences: [], nextModel: [] };
 */
export interface OpencodeRows {
  migrations: readonly string[];
  sessions: readonly { id: string; version: string }[];
  parts: readonly { id: string; messageId: string; sessionId: string; data: string }[];
  sequences: readonly { aggregateId: string; seq: number }[];
  nextModel: readonly string[];
}

/**
 * One part the repair changes: its new `data`, and the event recording the change.
 *
 * @example
 * const update: OpencodePartUpdate = { partId: 'prt_1', sessionId: 'ses_1', data: '{}', eventId: 'evt_1', seq: 12, event: '{}' };
 */
export interface OpencodePartUpdate {
  partId: string;
  sessionId: string;
  data: string;
  eventId: string;
  seq: number;
  event: string;
}

/**
 * What the repair decides for a database.
 *
 * @example
 * if (plan.kind === 'repair') console.log(plan.updates.length, 'parts');
 */
export type OpencodePlan =
  | {
      kind: 'repair';
      detection: FormatDetection;
      calls: UnansweredCall[];
      updates: OpencodePartUpdate[];
      /** The last event number of each session the repair writes to. */
      sequences: Map<string, number>;
    }
  | { kind: 'clean'; detection: FormatDetection; detail: string }
  | { kind: 'refuse'; detection?: FormatDetection; detail: string };

/**
 * Plan the repair of an opencode database from its rows: every tool part left `pending` or
 * `running` becomes the `error` state opencode writes for a failed tool, with the interrupted
 * text, and one `message.part.updated.1` event per part continues its session's sequence.
 * Pure; never throws on what the rows hold (a shape it does not know is a refusal).
 *
 * @example
 * import { randomBytes } from 'node:crypto';
 * const plan = planOpencode(rows, { now: new Date(), randomBytes });
 */
export function planOpencode(rows: OpencodeRows, context: PlanContext): OpencodePlan {
  try {
    return planRows(rows, context);
  } catch (error) {
    const reason = JSON.stringify(String(error)).slice(0, 200);
    return { kind: 'refuse', detail: `opencode database: could not plan a repair (${reason})` };
  }
}

function planRows(rows: OpencodeRows, context: PlanContext): OpencodePlan {
  const newest = [...rows.migrations].sort().at(-1) ?? '';
  const databaseDetection: FormatDetection = {
    format: 'opencode',
    version: `database ${newest || 'without migrations'}`,
    supported: true,
  };
  if (newest !== OPENCODE_NEWEST_MIGRATION) {
    const than =
      newest === '' || newest < OPENCODE_NEWEST_MIGRATION
        ? 'opened last by an opencode older than those repair was tested with'
        : 'migrated by an opencode newer than those repair was tested with';
    return {
      kind: 'refuse',
      detection: {
        ...databaseDetection,
        supported: false,
        reason: `its newest schema migration is ${shown(newest)}: ${than} (${testedRange()}, whose newest is ${OPENCODE_NEWEST_MIGRATION})`,
      },
      detail: 'a database schema this version of repair was not tested with',
    };
  }
  const versions = new Map(rows.sessions.map((session) => [session.id, session.version]));
  const stuck = rows.parts.map((part) => ({ ...part, parsed: parsePart(part.data) }));
  if (stuck.length === 0) {
    return {
      kind: 'clean',
      detection: databaseDetection,
      detail: 'no tool call is left pending or running',
    };
  }
  const sessionVersions = new Set<string>();
  for (const part of stuck) {
    const version = versions.get(part.sessionId);
    if (version === undefined) {
      return {
        kind: 'refuse',
        detection: databaseDetection,
        detail: `part ${shown(part.id)} belongs to session ${shown(part.sessionId)}, which is not in the database`,
      };
    }
    sessionVersions.add(version);
  }
  const detection: FormatDetection = {
    format: 'opencode',
    version: [...sessionVersions].sort().join(', '),
    supported: true,
  };
  const untested = untestedVersions(sessionVersions);
  if (untested !== null) {
    return {
      kind: 'refuse',
      detection: { ...detection, supported: false, reason: untested },
      detail: 'an opencode version this version of repair was not tested with',
    };
  }
  for (const part of stuck) {
    if (typeof part.parsed === 'string') {
      return { kind: 'refuse', detection, detail: `part ${shown(part.id)}: ${part.parsed}` };
    }
    if (rows.nextModel.includes(part.sessionId)) {
      return {
        kind: 'refuse',
        detection,
        detail: `session ${shown(part.sessionId)} also has rows in session_message (opencode's next session model), which repair was not tested with`,
      };
    }
  }
  return planUpdates(stuck as StuckPart[], rows, detection, context);
}

/** The releases tested, as a range: `opencode 1.17.11 to 1.18.34`. */
function testedRange(): string {
  return `opencode ${OPENCODE_TESTED[0]} to ${OPENCODE_TESTED.at(-1)}`;
}

/**
 * Why sessions of these opencode versions are not repaired, or null when every one is a
 * release between the oldest and the newest tested. A newer release is refused too: opencode's
 * rows have no seen shapes to hold it to (`--allow-newer` is for Claude Code and Codex).
 */
function untestedVersions(versions: ReadonlySet<string>): string | null {
  const older: string[] = [];
  const newer: string[] = [];
  for (const version of versions) {
    const verdict = releaseVerdict('opencode', version);
    if (verdict.kind === 'newer') newer.push(shown(version));
    else if (verdict.kind !== 'tested') older.push(shown(version));
  }
  const reasons = [
    ...(older.length > 0
      ? [
          `sessions written by opencode ${older.join(', ')}, older than ${OPENCODE_TESTED[0]} or not a release`,
        ]
      : []),
    ...(newer.length > 0
      ? [`sessions written by opencode ${newer.join(', ')}, newer than ${OPENCODE_TESTED.at(-1)}`]
      : []),
  ];
  return reasons.length === 0
    ? null
    : `${reasons.join('; ')}: repair was tested with ${testedRange()}`;
}

/** A tool part left pending or running, parsed. */
interface StuckPart {
  id: string;
  messageId: string;
  sessionId: string;
  parsed: ToolPart;
}

interface ToolPart {
  value: Record<string, unknown>;
  state: Record<string, unknown>;
  tool: string;
  callID: string;
}

/** A stuck tool part's data, or why it is not one the repair knows. */
function parsePart(data: string): ToolPart | string {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return 'its data is not JSON';
  }
  if (!isObject(value) || value.type !== 'tool') return 'not a tool part';
  const { state, tool, callID } = value;
  if (typeof tool !== 'string' || typeof callID !== 'string' || !isObject(state)) {
    return 'a tool part without a string tool and callID and a state';
  }
  if (state.status !== 'pending' && state.status !== 'running') {
    return `a tool part in state ${shown(state.status)}`;
  }
  return { value, state, tool, callID };
}

function planUpdates(
  stuck: readonly StuckPart[],
  rows: OpencodeRows,
  detection: FormatDetection,
  context: PlanContext,
): OpencodePlan {
  const time = context.now.getTime();
  if (!Number.isFinite(time)) return { kind: 'refuse', detail: 'the clock gave no valid time' };
  const sequences = new Map<string, number>();
  for (const sequence of rows.sequences) sequences.set(sequence.aggregateId, sequence.seq);
  const calls: UnansweredCall[] = [];
  const updates: OpencodePartUpdate[] = [];
  let counter = 0;
  for (const part of stuck) {
    const { value, state } = part.parsed;
    const start =
      isObject(state.time) && typeof state.time.start === 'number' ? state.time.start : time;
    // failToolCall's shape: metadata kept when there is some (JSON drops an undefined one).
    const failed = {
      status: 'error',
      input: isObject(state.input) ? state.input : {},
      error: INTERRUPTED_MESSAGE,
      metadata: state.metadata,
      time: { start, end: time },
    };
    const data = JSON.stringify({ ...value, state: failed });
    const seq = (sequences.get(part.sessionId) ?? -1) + 1;
    sequences.set(part.sessionId, seq);
    counter += 1;
    const event = JSON.stringify({
      sessionID: part.sessionId,
      part: {
        id: part.id,
        sessionID: part.sessionId,
        messageID: part.messageId,
        ...JSON.parse(data),
      },
      time,
    });
    updates.push({
      partId: part.id,
      sessionId: part.sessionId,
      data,
      eventId: ascendingId('evt', time, counter, context),
      seq,
      event,
    });
    calls.push({ callId: part.parsed.callID, toolName: part.parsed.tool, line: 0 });
  }
  return { kind: 'repair', detection, calls, updates, sequences };
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * An id in opencode's ascending shape: the prefix, 12 hex digits of the time in milliseconds
 * times 4096 plus a counter (its low 48 bits), and 14 random base-62 characters.
 */
function ascendingId(prefix: string, time: number, counter: number, context: PlanContext): string {
  const stamp = (BigInt(time) * 4096n + BigInt(counter)) & 0xffff_ffff_ffffn;
  const random = Array.from(context.randomBytes(14), (byte) => BASE62[byte % 62]).join('');
  return `${prefix}_${stamp.toString(16).padStart(12, '0')}${random}`;
}
