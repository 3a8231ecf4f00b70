/**
 * One line of another agent's session file, as `repair` reads it: split on `\n` only (Claude
 * Code writes raw U+2028 inside strings), never including a torn last line (the shell copies
 * that to a sidecar and never parses it).
 *
 * @example
 * const line: ForeignLine = { number: 1, text: '{"type":"session"}', value: { type: 'session' } };
 */
export interface ForeignLine {
  /** 1-based line number in the file. */
  number: number;
  /** The line's text, without its newline. */
  text: string;
  /** The parsed JSON, or undefined when the line is not JSON (the owning tools skip such lines). */
  value: unknown;
}

/**
 * A session's lines as a format reads them: iterable as often as it needs (each pass reads the
 * file again, in chunks: a format keeps only what it needs of a line, never every line).
 *
 * @example
 * for (const line of lines) if (line.value === undefined) console.log(`line ${line.number} is not JSON`);
 */
export type SessionLines = Iterable<ForeignLine>;

/**
 * The first line of a session (line 1), or undefined when it has none; reads only that far.
 *
 * @example
 * const header = firstLine(lines)?.value;
 */
export function firstLine(lines: SessionLines): ForeignLine | undefined {
  for (const line of lines) return line;
  return undefined;
}

/**
 * Which client wrote a session file, and whether its version is one `repair` was tested with.
 *
 * @example
 * const found: FormatDetection = { format: 'pi', version: 'session v3', supported: true };
 */
export interface FormatDetection {
  format: ForeignFormatName;
  /** What the file says of its version: the client's version, or the file format's. */
  version: string;
  /** False for a version outside the tested ranges: `repair` then refuses, naming it. */
  supported: boolean;
  /**
   * Why a version is not supported (set when `supported` is false), or why an untested newer
   * one was accepted (`--allow-newer`, every line of a shape the tests have seen).
   */
  reason?: string;
  /**
   * Set when the client that wrote the session is newer than every release tested: the newest
   * tested. Refused unless `allowNewer`, and then only when every line is of a seen shape.
   */
  newerThan?: string;
  /**
   * What the file records of the session, for liveness (a running client is matched to it by
   * the id on its command line and by its working folder): each only when the file says it.
   */
  session?: { id?: string; cwd?: string };
}

/**
 * The formats `repair` knows.
 *
 * @example
 * const name: ForeignFormatName = 'claude-code';
 */
export type ForeignFormatName = 'claude-code' | 'codex' | 'pi' | 'opencode' | 'gemini-cli';

/**
 * One tool call a crash left without a result.
 *
 * @example
 * const call: UnansweredCall = { callId: 'toolu_01', toolName: 'Bash', line: 12 };
 */
export interface UnansweredCall {
  callId: string;
  toolName: string;
  /** The line the call is on. */
  line: number;
}

/**
 * What a format decides for one session, purely from its lines.
 *
 * - `repair`: `calls` have no result; `append` are the lines (JSON, no newline) to append, in
 *   the client's own shapes, in order.
 * - `clean`: nothing to repair (`detail` says why: every call answered, a turn the client drops
 *   itself, …).
 * - `resumed`: the client already resumed the session past the cut-off `calls` without a
 *   repair; `told` is what the model was told of them (`"aborted"`, `"No result provided"`, or
 *   that the calls were silently dropped). Results appended now would not follow the calls.
 * - `refuse`: a shape this version does not know how to repair honestly; nothing is written.
 *
 * @example
 * if (plan.kind === 'repair') console.log(plan.calls.length, 'calls answered');
 */
export type RepairPlan =
  | { kind: 'repair'; calls: UnansweredCall[]; append: string[] }
  | { kind: 'clean'; detail: string }
  | { kind: 'resumed'; calls: UnansweredCall[]; told: string; detail: string }
  | { kind: 'refuse'; detail: string };

/**
 * What a plan may use that a pure function cannot make: the time, and fresh ids (each format
 * shapes its own from these random bytes: a UUID v4, 8 hex digits, …).
 *
 * @example
 * const context: PlanContext = { now: new Date(), randomBytes: (n) => crypto.randomBytes(n) };
 */
export interface PlanContext {
  now: Date;
  randomBytes: (count: number) => Uint8Array;
}

/**
 * One client's session format: recognising it and planning the repair of a session it wrote.
 * Both are pure and never throw: every line is untrusted.
 *
 * @example
 * const detected = format.detect(lines);
 * if (detected?.supported) console.log(format.plan(lines, { now: new Date(), randomBytes }));
 */
export interface ForeignFormat {
  name: ForeignFormatName;
  /** The file's format and version, or null when it is not this format. */
  detect(lines: SessionLines): FormatDetection | null;
  /** The repair of a session of this format (called only when `detect` recognised it). */
  plan(lines: SessionLines, context: PlanContext): RepairPlan;
}

/**
 * A {@link ForeignFormat} from a format's detect and plan, made never to throw whatever the
 * lines hold: an exception while detecting is "not this format", one while planning a refusal
 * naming `label` — a shape the format's code did not foresee is never repaired by a guess.
 *
 * @example
 * export const piFormat = neverThrowingFormat('pi', 'pi session', detectPi, planPi);
 */
export function neverThrowingFormat(
  name: ForeignFormatName,
  label: string,
  detect: ForeignFormat['detect'],
  plan: ForeignFormat['plan'],
): ForeignFormat {
  return {
    name,
    detect: (lines) => {
      try {
        return detect(lines);
      } catch {
        return null;
      }
    },
    plan: (lines, context) => {
      try {
        return plan(lines, context);
      } catch (error) {
        const reason = JSON.stringify(String(error)).slice(0, 200);
        return { kind: 'refuse', detail: `${label}: could not plan a repair (${reason})` };
      }
    },
  };
}
