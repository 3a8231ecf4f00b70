/**
 * `status` output: the run tree as a table for people, or as JSON for scripts. Pure.
 *
 * @module
 */
import { EXIT, type ExitCode } from './exit-codes.ts';
import type { RunNode, RunState } from './run-tree.ts';
import { fitWidth } from './display-width.ts';
import { terminalSafe } from './terminal-safe.ts';
import { type Style, visibleWidth } from './terminal-style.ts';

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
  state: RunState;
  /** Why it is in that state: `inspect`'s reason, or for a revivable run what is open. */
  reason: string;
  detail: string | null;
  revivalsUsed: number;
  maxRevivals: number;
  openCalls: number;
  openDispatches: { callId: string; toolName: string | null }[];
  neverDispatched: { callId: string; toolName: string | null }[];
  pendingJoins: { callId: string; agentIds: string[] }[];
  bytes: number;
  messages: number;
  /** Estimated tokens a resume would send; 0 unless the run is revivable. */
  resumeTokens: number;
  children: StatusJsonRun[];
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
  summary: Record<RunState, number> & { total: number; resumeTokens: number };
  exitCode: number;
}

const TAIL_PHRASES: Record<string, string> = {
  'calls-unanswered': 'calls unanswered',
  'results-unread': 'results not yet read',
  'user-turn': 'a turn not yet answered',
};

/** The widest a TYPE or LABEL cell gets in the table (`--json` has the whole text). */
const MAX_CELL_WIDTH = 40;

const STATES: RunState[] = ['running', 'finished', 'revivable', 'capped', 'unreadable', 'empty'];

/**
 * Count the states of every run, and the tokens reviving the revivable ones would send.
 *
 * @example
 * summarize(roots).revivable; // 2
 */
export function summarize(roots: RunNode[]): StatusJson['summary'] {
  const summary = { total: 0, resumeTokens: 0 } as StatusJson['summary'];
  for (const state of STATES) summary[state] = 0;
  const visit = (node: RunNode): void => {
    summary.total += 1;
    summary[node.state] += 1;
    if (node.state === 'revivable') summary.resumeTokens += node.inspection.estimatedTokens;
    node.children.forEach(visit);
  };
  roots.forEach(visit);
  return summary;
}

/**
 * `status`'s exit code: unreadable (4) before revivable (3) before capped (5), else 0.
 *
 * @example
 * statusExitCode(summarize(roots)); // 3 when something can be revived
 */
export function statusExitCode(summary: StatusJson['summary']): ExitCode {
  if (summary.unreadable > 0) return EXIT.unreadable;
  if (summary.revivable > 0) return EXIT.revivable;
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
  return parts.join(', ');
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

function runJson(node: RunNode): StatusJsonRun {
  const inspection = node.inspection;
  return {
    path: node.displayPath,
    agentId: inspection.agentId ?? null,
    agentType: inspection.agentType ?? null,
    label: inspection.label ?? null,
    state: node.state,
    reason: reasonOf(node),
    detail: inspection.detail ?? null,
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
    resumeTokens: node.state === 'revivable' ? inspection.estimatedTokens : 0,
    children: node.children.map(runJson),
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
 * The tree as an aligned table (columns measured in terminal columns, so wide characters line
 * up), with a summary line and, when something can be done, the command that does it. Text
 * from transcripts and file names is made safe for a terminal.
 *
 * @example
 * process.stdout.write(statusText(roots, style));
 */
export function statusText(roots: RunNode[], style: Style): string {
  if (roots.length === 0) return 'No transcripts found.\n';
  const header = ['RUN', 'TYPE', 'LABEL', 'STATE', 'WHY', 'REVIVALS', 'OPEN', 'SIZE', '~TOKENS'];
  const rows: string[][] = [];
  const visit = (node: RunNode, prefix: string, isRoot: boolean, isLast: boolean): void => {
    const inspection = node.inspection;
    const branch = isRoot ? '' : isLast ? '└─ ' : '├─ ';
    // Paths, ids, types, labels and reasons come from file names and transcripts: made safe.
    const name = terminalSafe(
      isRoot
        ? `${node.displayPath}${inspection.agentId === undefined ? '' : ` (${inspection.agentId})`}`
        : (inspection.agentId ?? node.displayPath),
    );
    rows.push([
      `${prefix}${branch}${name}`,
      fitWidth(terminalSafe(inspection.agentType ?? '—'), MAX_CELL_WIDTH),
      fitWidth(terminalSafe(inspection.label ?? '—'), MAX_CELL_WIDTH),
      colourState(node.state, style),
      inspection.reviver !== undefined
        ? `being revived by pid ${inspection.reviver.pid ?? '?'}`
        : node.state === 'finished' || node.state === 'running'
          ? style.dim('—')
          : terminalSafe(reasonOf(node)),
      `${inspection.revivalsUsed}/${inspection.maxRevivals}`,
      String(openCalls(node)),
      formatBytes(inspection.bytes),
      node.state === 'revivable' ? formatCount(inspection.estimatedTokens) : style.dim('—'),
    ]);
    const childPrefix = isRoot ? '' : `${prefix}${isLast ? '   ' : '│  '}`;
    node.children.forEach((child, index) => {
      visit(child, childPrefix, false, index === node.children.length - 1);
    });
  };
  for (const root of roots) visit(root, '', true, true);
  const lines = table([header.map((cell) => style.bold(cell)), ...rows]);
  const summary = summarize(roots);
  const counts = STATES.filter((state) => summary[state] > 0).map(
    (state) => `${summary[state]} ${state}`,
  );
  lines.push('');
  lines.push(`${plural(summary.total, 'run')}: ${counts.join(', ')}.`);
  // The table says only that a run is unreadable; the person needs the file, line and cause.
  const unreadable = roots.flatMap(function collect(node): RunNode[] {
    return [...(node.state === 'unreadable' ? [node] : []), ...node.children.flatMap(collect)];
  });
  for (const node of unreadable) {
    lines.push(
      `${style.red('Unreadable:')} ${terminalSafe(node.inspection.detail ?? node.displayPath)}`,
    );
  }
  if (summary.revivable > 0) {
    lines.push(
      `Reviving would send about ${formatCount(summary.resumeTokens)} tokens. ` +
        `Next: llm-agent revive ${roots
          .filter((root) => treeHas(root, 'revivable'))
          .map((root) => quote(root.displayPath))
          .join(' ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function treeHas(node: RunNode, state: RunState): boolean {
  return node.state === state || node.children.some((child) => treeHas(child, state));
}

function colourState(state: RunState, style: Style): string {
  switch (state) {
    case 'revivable':
      return style.yellow(state);
    case 'unreadable':
    case 'capped':
      return style.red(state);
    case 'finished':
      return style.green(state);
    case 'running':
      return style.cyan(state);
    default:
      return style.dim(state);
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
