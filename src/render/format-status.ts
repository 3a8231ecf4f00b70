/**
 * `status` output: the run tree as a table for people, or as JSON for scripts. Pure.
 *
 * @module
 */
import { EXIT, type ExitCode } from './exit-codes.ts';
import type { RunNode, StatusState } from './run-node.ts';
import { fitWidth } from './display-width.ts';
import { fitTable, type TableCell, type TableColumn } from './fit-table.ts';
import { haltLine, haltWhy } from './halt-text.ts';
import { serializeJson } from './json-text.ts';
import { terminalSafe } from './terminal-safe.ts';
import { type Style, visibleWidth } from './terminal-style.ts';
import { needsPerson } from '../transcript/run-halt.ts';

/**
 * One run in `status --json`.
 *
 * @example
 * const [first]: StatusJsonRun[] = statusJson(roots, 3).runs;
 * if (first?.state === 'revivable') console.log(first.path, first.openCalls);
 */
export interface StatusJsonRun {
  path: string;
  agentId: string | null;
  agentType: string | null;
  label: string | null;
  state: StatusState;
  /** Why it is in that state: `inspect`'s reason, or for a revivable run what is open. */
  reason: string;
  detail: string | null;
  /**
   * For a `failed` or `stopped` run: when, why (the last error or the reason given), the
   * cause the errors point at and whether a person is likely needed before reviving.
   */
  halt: {
    state: 'failed' | 'stopped';
    at: string;
    detail: string;
    cause: string | null;
    model: string | null;
    retryAfterMs: number | null;
    needsPerson: boolean;
  } | null;
  revivalsUsed: number;
  maxRevivals: number;
  openCalls: number;
  openDispatches: { callId: string; toolName: string | null }[];
  neverDispatched: { callId: string; toolName: string | null }[];
  pendingJoins: { callId: string; agentIds: string[] }[];
  bytes: number;
  messages: number;
  /** Estimated tokens a resume would send; 0 unless the run is revivable (failed and stopped included). */
  resumeTokens: number;
  children: StatusJsonRun[];
  /** Only for `status --database`: the worker holding the run, its epoch and lease, its row's status. */
  database?: RunNode['database'];
}

/**
 * The whole of `status --json`.
 *
 * @example
 * const json: StatusJson = JSON.parse(stdout); // `llm-agent status --json`
 * if (json.summary.revivable > 0) console.log(`${json.summary.resumeTokens} tokens to resume`);
 */
export interface StatusJson {
  maxRevivals: number;
  runs: StatusJsonRun[];
  summary: Record<StatusState, number> & { total: number; resumeTokens: number };
  exitCode: number;
}

const TAIL_PHRASES: Record<string, string> = {
  'calls-unanswered': 'calls unanswered',
  'results-unread': 'results not yet read',
  'user-turn': 'a turn not yet answered',
};

/** The widest a TYPE or LABEL cell gets in the table (`--json` has the whole text). */
const MAX_CELL_WIDTH = 40;

const STATES: StatusState[] = [
  'running',
  'finished',
  'revivable',
  'failed',
  'stopped',
  'capped',
  'unreadable',
  'empty',
  'queued',
];

/**
 * Count the states of every run, and the tokens reviving the revivable ones would send.
 *
 * @example
 * summarize(roots).revivable; // 2
 */
export function summarize(roots: RunNode[]): StatusJson['summary'] {
  const summary = emptyStatusSummary();
  const visit = (node: RunNode): void => {
    summary.total += 1;
    summary[node.state] += 1;
    if (node.inspection.revivable) summary.resumeTokens += node.inspection.estimatedTokens;
    node.children.forEach(visit);
  };
  roots.forEach(visit);
  return summary;
}

/**
 * The summary of no runs: every state counted 0, no tokens.
 *
 * @example
 * const summary = emptyStatusSummary();
 * summary.finished += 1;
 */
export function emptyStatusSummary(): StatusJson['summary'] {
  const summary = { total: 0, resumeTokens: 0 } as StatusJson['summary'];
  for (const state of STATES) summary[state] = 0;
  return summary;
}

/**
 * `status`'s exit code: unreadable (4) before revivable (3: `revivable`, `failed` or
 * `stopped`) before capped (5), else 0.
 *
 * @example
 * statusExitCode(summarize(roots)); // 3 when something can be revived
 */
export function statusExitCode(summary: StatusJson['summary']): ExitCode {
  if (summary.unreadable > 0) return EXIT.unreadable;
  if (summary.revivable + summary.failed + summary.stopped > 0) return EXIT.revivable;
  if (summary.capped > 0) return EXIT.capped;
  return EXIT.ok;
}

/**
 * Why a run is in its state, in a few words: for a revivable run, what is open; otherwise
 * `inspect`'s reason.
 *
 * @example
 * reasonOf(node); // '1 call in flight, waiting on 2 children'
 */
export function reasonOf(node: RunNode): string {
  const inspection = node.inspection;
  if (!inspection.revivable) return inspection.reason ?? node.state;
  const parts: string[] = [];
  const waiting = databaseWait(node);
  if (inspection.halt !== undefined) parts.push(haltWhy(inspection.halt));
  const calls = inspection.openDispatches.filter(
    (call) => !inspection.pendingJoins.some((join) => join.callId === call.callId),
  );
  const unsettled = calls.filter(
    (call) => call.resultSeq !== undefined && call.resultByRevival !== true,
  ).length;
  const inFlight = calls.length - unsettled;
  if (inFlight > 0) parts.push(`${plural(inFlight, 'call')} in flight`);
  if (unsettled > 0) parts.push(`${plural(unsettled, 'result')} written, not settled`);
  if (inspection.neverDispatched.length > 0) {
    parts.push(`${plural(inspection.neverDispatched.length, 'call')} not started`);
  }
  const waitingOn = inspection.pendingJoins.reduce(
    (count, join) => count + (join.agentIds?.length ?? 1),
    0,
  );
  if (waitingOn > 0) parts.push(`waiting on ${plural(waitingOn, 'child', 'children')}`);
  if (parts.length === 0) parts.push(TAIL_PHRASES[inspection.tail ?? ''] ?? 'interrupted');
  return waiting === null ? parts.join(', ') : `${waiting}: ${parts.join(', ')}`;
}

/** Why a revivable run of the PostgreSQL store is not being revived right now, or null. */
function databaseWait(node: RunNode): string | null {
  const hold = node.database;
  if (hold === undefined) return null;
  if (hold.leaseExpired) return 'its worker died';
  if (hold.status === 'awaiting-approval') return 'awaiting approval';
  if (hold.status === 'approved') return 'approved, waiting for a worker';
  return null;
}

/**
 * The JSON of one tree.
 *
 * @example
 * JSON.stringify(statusJson(roots, 3));
 */
export function statusJson(roots: RunNode[], maxRevivals: number): StatusJson {
  const summary = summarize(roots);
  return { maxRevivals, runs: roots.map(runJson), summary, exitCode: statusExitCode(summary) };
}

/**
 * The text of {@link statusJson} on one line — the same text `JSON.stringify` makes of it — in
 * pieces of about `pieceChars` characters: each tree's JSON is made, written into a piece and
 * dropped in turn, so a store's 100,000 runs never exist as one object graph and one string at
 * once. A tree nested too deep for `JSON.stringify` is written by `serializeJson`.
 *
 * @example
 * for (const piece of statusJsonPieces(roots, 3)) io.stdout.write(piece);
 */
export function* statusJsonPieces(
  roots: RunNode[],
  maxRevivals: number,
  pieceChars = 1 << 20,
): Generator<string> {
  const summary = summarize(roots);
  let piece = `{"maxRevivals":${JSON.stringify(maxRevivals)},"runs":[`;
  let first = true;
  for (const root of roots) {
    piece += `${first ? '' : ','}${treeJsonText(root)}`;
    first = false;
    if (piece.length >= pieceChars) {
      yield piece;
      piece = '';
    }
  }
  yield `${piece}],"summary":${JSON.stringify(summary)},"exitCode":${statusExitCode(summary)}}`;
}

function treeJsonText(root: RunNode): string {
  const tree = runJson(root);
  try {
    return JSON.stringify(tree);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return serializeJson(tree);
  }
}

/**
 * One run of `status --json`, its children under it.
 *
 * @example
 * const [first] = roots.map(runJson);
 */
export function runJson(node: RunNode): StatusJsonRun {
  const inspection = node.inspection;
  return {
    path: node.displayPath,
    agentId: inspection.agentId ?? null,
    agentType: inspection.agentType ?? null,
    label: inspection.label ?? null,
    state: node.state,
    reason: reasonOf(node),
    detail: inspection.detail ?? null,
    halt:
      inspection.halt === undefined
        ? null
        : {
            state: inspection.halt.state,
            at: inspection.halt.at,
            detail: inspection.halt.detail,
            cause: inspection.halt.cause ?? null,
            model: inspection.halt.model ?? null,
            retryAfterMs: inspection.halt.retryAfterMs ?? null,
            needsPerson: needsPerson(inspection.halt.cause),
          },
    revivalsUsed: inspection.revivalsUsed,
    maxRevivals: inspection.maxRevivals,
    openCalls: openCalls(node),
    openDispatches: inspection.openDispatches.map((call) => ({
      callId: call.callId,
      toolName: call.toolName ?? null,
    })),
    neverDispatched: inspection.neverDispatched.map((call) => ({
      callId: call.callId,
      toolName: call.toolName ?? null,
    })),
    pendingJoins: inspection.pendingJoins.map((join) => ({
      callId: join.callId,
      agentIds: join.agentIds ?? [],
    })),
    bytes: inspection.bytes,
    messages: inspection.messages,
    resumeTokens: inspection.revivable ? inspection.estimatedTokens : 0,
    children: node.children.map(runJson),
    ...(node.database === undefined ? {} : { database: node.database }),
  };
}

/**
 * Open calls: dispatched and never settled, plus asked for and never started.
 *
 * @example
 * openCalls(node); // 2
 */
export function openCalls(node: RunNode): number {
  return node.inspection.openDispatches.length + node.inspection.neverDispatched.length;
}

/**
 * How `status` lays its table out: `width` is the terminal's (Infinity: no limit), `wide`
 * shows every cell whole whatever the width.
 *
 * @example
 * const layout: StatusLayout = { width: 80, wide: false };
 */
export interface StatusLayout {
  width: number;
  wide: boolean;
}

/** The columns `status --database` adds: who holds each run, until when. */
const DATABASE_COLUMNS: TableColumn[] = [
  { header: 'WORKER', cut: 8, comfort: 20, drop: 6, dropEarly: true },
  { header: 'LEASE UNTIL', drop: 7, dropEarly: true },
];

/**
 * The status table's columns: which may be cut (to how narrow) and which left out when the
 * terminal is too narrow (least useful first: the token estimate is in the summary line too).
 */
const COLUMNS: TableColumn[] = [
  { header: 'RUN', cut: 20, comfort: 30, cutLast: true },
  { header: 'TYPE', cut: 4, comfort: 8, drop: 2, dropEarly: true },
  { header: 'LABEL', cut: 5, comfort: 12, drop: 5 },
  { header: 'STATE' },
  { header: 'WHY', cut: 8, comfort: 20 },
  { header: 'REVIVALS', drop: 3, dropEarly: true },
  { header: 'OPEN', drop: 4 },
  { header: 'SIZE', drop: 1, dropEarly: true },
  { header: '~TOKENS', drop: 0, dropEarly: true },
];

/**
 * What the command that prints a status knows about what to do next: how the user runs the CLI
 * (`invocation`, default `llm-agent`), the `--agents` module given — or that none is needed
 * (`agents: null`, the demo's runs) —, the cap, the store, and the revival plan's roots and
 * tokens (so the summary says what `revive` would send, not what every revivable run holds).
 *
 * @example
 * const next: StatusNext = { invocation: 'npx llm-agent-revival', agents: 'agents.ts' };
 */
export interface StatusNext {
  invocation?: string;
  agents?: string | null;
  maxRevivals?: number;
  database?: boolean;
  /** `--database URL [--schema NAME]` for the store's hint, and whether a password was masked. */
  target?: { args: string; masked: boolean };
  plan?: { estimatedTokens: number; roots: RunNode[] };
}

/**
 * The tree as an aligned table (columns measured in terminal columns, so wide characters line
 * up) fitted to `layout.width` — RUN, TYPE, LABEL and WHY cut with `…`, then the least useful
 * columns left out — with a summary line and, when something can be done, the command that
 * does it. Text from transcripts and file names is made safe for a terminal.
 *
 * @example
 * process.stdout.write(statusText(roots, style, { width: process.stdout.columns ?? Infinity, wide: false }));
 */
export function statusText(
  roots: RunNode[],
  style: Style,
  layout: StatusLayout = { width: Number.POSITIVE_INFINITY, wide: false },
  next: StatusNext = {},
): string {
  if (roots.length === 0) {
    return next.database === true ? 'No runs in the database.\n' : 'No transcripts found.\n';
  }
  const width = layout.wide ? Number.POSITIVE_INFINITY : layout.width;
  // A transcript controls a type's and a label's length: cut unless --wide (--json has it whole).
  const cell = (text: string): string => (layout.wide ? text : fitWidth(text, MAX_CELL_WIDTH));
  const rows: TableCell[][] = [];
  const visit = (node: RunNode, prefix: string, isRoot: boolean, isLast: boolean): void => {
    const inspection = node.inspection;
    const branch = isRoot ? '' : isLast ? '└─ ' : '├─ ';
    // Paths, ids, types, labels and reasons come from file names and transcripts: made safe.
    const name = terminalSafe(
      isRoot
        ? `${node.displayPath}${inspection.agentId === undefined ? '' : ` (${inspection.agentId})`}`
        : (inspection.agentId ?? node.displayPath),
    );
    const quiet = node.state === 'finished' || node.state === 'running';
    rows.push([
      { text: `${prefix}${branch}${name}` },
      { text: cell(terminalSafe(inspection.agentType ?? '—')) },
      { text: cell(terminalSafe(inspection.label ?? '—')) },
      { text: node.state, paint: (text) => colourState(node.state, text, style) },
      !inspection.revivable && inspection.reviver !== undefined
        ? { text: `being revived by pid ${inspection.reviver.pid ?? '?'}` }
        : quiet
          ? { text: '—', paint: style.dim }
          : { text: terminalSafe(whyOf(node)) },
      { text: `${inspection.revivalsUsed}/${inspection.maxRevivals}` },
      { text: String(openCalls(node)) },
      { text: formatBytes(inspection.bytes) },
      inspection.revivable
        ? { text: formatCount(inspection.estimatedTokens) }
        : { text: '—', paint: style.dim },
      ...(next.database === true ? holdCells(node, style) : []),
    ]);
    const childPrefix = isRoot ? '' : `${prefix}${isLast ? '   ' : '│  '}`;
    node.children.forEach((child, index) => {
      visit(child, childPrefix, false, index === node.children.length - 1);
    });
  };
  for (const root of roots) visit(root, '', true, true);
  const columns = next.database === true ? [...COLUMNS, ...DATABASE_COLUMNS] : COLUMNS;
  const fitted = fitTable(columns, rows, width, style.bold);
  const lines = fitted.lines;
  const summary = summarize(roots);
  const counts = STATES.filter((state) => summary[state] > 0).map(
    (state) => `${summary[state]} ${state}`,
  );
  const prose: string[] = [];
  prose.push(`${plural(summary.total, 'run')}: ${counts.join(', ')}.`);
  if (fitted.narrowed) prose.push(style.dim('(cut to fit the terminal; --wide shows everything)'));
  // The table says only that a run is unreadable; the person needs the file, line and cause.
  const unreadable = roots.flatMap(function collect(node): RunNode[] {
    return [...(node.state === 'unreadable' ? [node] : []), ...node.children.flatMap(collect)];
  });
  for (const node of unreadable) {
    prose.push(
      `${style.red('Unreadable:')} ${terminalSafe(node.inspection.detail ?? node.displayPath)}`,
    );
  }
  // The WHY cell is cut to fit; the person deciding whether to revive needs it whole.
  const halted = roots.flatMap(function collect(node): RunNode[] {
    const here = node.inspection.revivable && node.inspection.halt !== undefined ? [node] : [];
    return [...here, ...node.children.flatMap(collect)];
  });
  for (const node of halted) {
    const halt = node.inspection.halt;
    if (halt === undefined) continue;
    const label = halt.state === 'failed' ? style.red('Failed:') : style.yellow('Stopped:');
    prose.push(
      `${label} ${terminalSafe(haltLine(halt, node.inspection.agentId ?? node.displayPath))}`,
    );
  }
  lines.push('');
  for (const line of prose) lines.push(...wrapLine(line, width));
  const toRevive = next.plan?.roots ?? roots.filter((root) => treeHasRevivable(root));
  if (summary.revivable + summary.failed + summary.stopped > 0 && toRevive.length > 0) {
    const tokens = next.plan?.estimatedTokens ?? summary.resumeTokens;
    lines.push(
      ...wrapLine(`Reviving would send about ${formatCount(tokens)} tokens. Next:`, width),
    );
    const command = next.invocation ?? 'llm-agent';
    if (next.database === true) {
      lines.push(...databaseNext(roots, width, style, command, next.target));
      return `${lines.join('\n')}\n`;
    }
    lines.push(...reviveNext(toRevive, next, command, width, style));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The revive command, each on a line of its own, whole, so that it can be copied as it is: one
 * for all roots when the module is known (or none is needed), else one per root — runs of
 * different roots may come from different agents modules, and revive takes one.
 */
function reviveNext(
  roots: RunNode[],
  next: StatusNext,
  command: string,
  width: number,
  style: Style,
): string[] {
  const cap = next.maxRevivals === undefined ? '' : ` --max-revivals ${next.maxRevivals}`;
  const agents =
    next.agents === null
      ? ''
      : ` --agents ${next.agents === undefined ? 'MODULE' : quote(next.agents)}`;
  const groups = next.agents === undefined ? roots.map((root) => [root]) : [roots];
  const lines = groups.map(
    (group) =>
      `  ${command} revive ${group.map((root) => quote(root.displayPath)).join(' ')}${agents}${cap}`,
  );
  if (next.agents === undefined) {
    const each =
      groups.length > 1
        ? 'for each, the agents module its runs were'
        : 'the agents module the runs were';
    const note = `MODULE: ${each} started with (status --agents MODULE fills it in; runs of the demo need none)`;
    lines.push(...wrapLine(note, width).map((line) => style.dim(line)));
  }
  return lines;
}

/**
 * What the WHY column says: for a run that cannot be revived, its cause (inspect's detail
 * without the path the row already names: not the state again); for a revivable one,
 * {@link reasonOf}.
 *
 * @example
 * whyOf(node); // 'line 7: checksum mismatch'
 */
export function whyOf(node: RunNode): string {
  const inspection = node.inspection;
  if (inspection.revivable || inspection.detail === undefined) return reasonOf(node);
  let detail = inspection.detail;
  for (const prefix of [`${node.path}:`, `${node.displayPath}:`]) {
    if (detail.startsWith(prefix)) {
      detail = detail.slice(prefix.length).trimStart();
      break;
    }
  }
  // `path:7: cause` names a line: say so once the path is gone.
  detail = detail.replace(/^(\d+): /, 'line $1: ');
  return detail === '' ? 'unreadable' : detail;
}

/**
 * A line of prose cut at spaces to at most `width` display columns (a word longer than that
 * stands alone, whole). Colour codes count nothing.
 *
 * @example
 * wrapLine('a b c', 3); // ['a b', 'c']
 */
export function wrapLine(text: string, width: number): string[] {
  if (!Number.isFinite(width) || visibleWidth(text) <= width) return [text];
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if (current !== '' && visibleWidth(candidate) > width) {
      lines.push(current);
      current = `  ${word}`;
    } else current = candidate;
  }
  if (current !== '') lines.push(current);
  return lines;
}

/** The WORKER and LEASE UNTIL cells of a store run. */
function holdCells(node: RunNode, style: Style): TableCell[] {
  const hold = node.database;
  if (hold === undefined || hold.owner === null) {
    return [
      { text: '—', paint: style.dim },
      { text: '—', paint: style.dim },
    ];
  }
  return [
    { text: terminalSafe(hold.owner) },
    hold.leaseExpired
      ? { text: `${hold.leaseExpires ?? '?'} (expired)`, paint: style.red }
      : { text: hold.leaseExpires ?? '—' },
  ];
}

/**
 * What a person can do about the revivable runs of a store: approve those a supervisor parked
 * (`awaiting-approval`: a worker then revives them) — a dead run nobody supervises is parked by
 * the next worker that looks.
 */
function databaseNext(
  roots: RunNode[],
  width: number,
  style: Style,
  command: string,
  target: StatusNext['target'],
): string[] {
  const waiting: string[] = [];
  const visit = (node: RunNode): void => {
    if (node.database?.status === 'awaiting-approval') waiting.push(quote(node.displayPath));
    node.children.forEach(visit);
  };
  roots.forEach(visit);
  if (waiting.length === 0) {
    return wrapLine(
      'A worker revives the dead runs (--policy auto) or parks them awaiting approval (ask).',
      width,
    ).map((line) => style.dim(line));
  }
  const database = target ?? { args: '--database URL', masked: false };
  const hint = [`  ${command} revive ${database.args} ${waiting.join(' ')}`];
  if (database.masked) hint.push(style.dim('(the password is masked: put yours back)'));
  return hint;
}

function treeHasRevivable(node: RunNode): boolean {
  return node.inspection.revivable || node.children.some(treeHasRevivable);
}

function colourState(state: StatusState, text: string, style: Style): string {
  switch (state) {
    case 'revivable':
    case 'stopped':
      return style.yellow(text);
    case 'unreadable':
    case 'capped':
    case 'failed':
      return style.red(text);
    case 'finished':
      return style.green(text);
    case 'running':
      return style.cyan(text);
    default:
      return style.dim(text);
  }
}

/**
 * Left-aligned columns, two spaces apart, measured without colour codes.
 *
 * @example
 * table([['a', 'b'], ['ccc', 'd']]); // ['a    b', 'ccc  d']
 */
export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, visibleWidth(cell));
    });
  }
  return rows.map((row) =>
    row
      .map((cell, index) =>
        index === row.length - 1
          ? cell
          : cell + ' '.repeat((widths[index] ?? 0) - visibleWidth(cell)),
      )
      .join('  ')
      .trimEnd(),
  );
}

/**
 * Bytes for people: `812 B`, `4.2 KB`, `1.3 MB`, `2.0 GB`.
 *
 * @example
 * formatBytes(4300); // '4.2 KB'
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * A count with thousands separators.
 *
 * @example
 * formatCount(12345); // '12,345'
 */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/**
 * `1 call`, `2 calls`.
 *
 * @example
 * plural(2, 'child', 'children'); // '2 children'
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * A path as a shell would need it, safe to print: a path with control or invisible characters
 * (a file name can hold an escape sequence) is written in bash's and zsh's `$'…'` quoting,
 * which spells them as escapes and still names the file when pasted.
 *
 * @example
 * quote("it's.jsonl"); // 'it'\''s.jsonl'
 * quote('a\u001b[2J.jsonl'); // $'a\x1b[2J.jsonl'
 */
export function quote(path: string): string {
  if (/^[\w@%+=:,./-]+$/.test(path)) return path;
  if (terminalSafe(path) === path) return `'${path.replaceAll("'", "'\\''")}'`;
  return `$'${terminalSafe(path.replace(/[\\']/g, '\\$&'))}'`;
}
