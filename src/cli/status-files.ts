import type { CommandIo } from '../runs/command-io.ts';
import { EXIT, type ExitCode } from '../render/exit-codes.ts';
import {
  type StatusNext,
  statusExitCode,
  statusJson,
  statusText,
  summarize,
} from '../render/format-status.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { jsonText } from '../render/json-text.ts';
import { allDemoRuns } from '../runs/demo-runs.ts';
import { planTreeRevival } from '../runs/tree-revival-plan.ts';
import { newTreeStats, type TreeStats } from '../runs/inspect-tree.ts';
import { statusTree } from '../runs/status-tree.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { terminalWidth } from './terminal-width.ts';

/**
 * `llm-agent status [PATH…]` on files: every run at and below the paths as a tree, as a table
 * or JSON. `values` are the command's parsed options. Its own module so that `status
 * --database` loads none of the file readers.
 *
 * @example
 * return await filesStatus(io, ['runs/'], { json: true }, 3);
 */
export async function filesStatus(
  io: CommandIo,
  positionals: string[],
  values: Record<string, unknown>,
  maxRevivals: number,
): Promise<ExitCode> {
  // LLM_AGENT_STATUS_STATS=1: one line on stderr saying where the answers came from (the
  // status index or a read) and what each part took; the bench records it.
  const stats: (TreeStats & { walkMs?: number; earlyHelpers?: boolean }) | undefined =
    io.env.LLM_AGENT_STATUS_STATS === '1' ? newTreeStats() : undefined;
  const startedAt = performance.now();
  const { roots, notRead } = await statusTree(
    positionals.length === 0 ? ['.'] : positionals,
    io.cwd,
    io.env,
    { maxRevivals, verify: values.verify === true, ...(stats === undefined ? {} : { stats }) },
  );
  const treeAt = performance.now();
  // A folder it could not read hides runs: a reason to look, like an unreadable transcript.
  const exitCode = notRead.length > 0 ? EXIT.unreadable : statusExitCode(summarize(roots));
  if (values.json === true) {
    const json = { ...statusJson(roots, maxRevivals), notRead, exitCode };
    io.stdout.write(`${jsonText(json, io.stdout)}\n`);
  } else {
    const layout = { width: terminalWidth(io), wide: values.wide === true };
    const next: StatusNext = { invocation: io.invocation ?? 'llm-agent' };
    if (typeof values.agents === 'string') next.agents = values.agents;
    if (values['max-revivals'] !== undefined) next.maxRevivals = maxRevivals;
    // The hint says what revive would do: the plan's roots and tokens (a tree a live process
    // holds is left alone), and no --agents when every run to revive is the demo's.
    const plan = planTreeRevival(roots);
    next.plan = {
      estimatedTokens: plan.estimatedTokens,
      roots: roots.filter((root) => plan.revivals.some((revival) => inTree(root, revival.node))),
    };
    if (
      next.agents === undefined &&
      plan.revivals.length > 0 &&
      (await allDemoRuns(plan.revivals))
    ) {
      next.agents = null;
    }
    io.stdout.write(statusText(roots, io.out, layout, next));
    for (const folder of notRead) {
      io.stdout.write(
        `${io.out.red('Not read:')} ${terminalSafe(folder.path)} (${terminalSafe(folder.reason)}): the runs in it are not shown\n`,
      );
    }
  }
  if (stats !== undefined) writeStats(io, stats, startedAt, treeAt);
  return exitCode;
}

/**
 * The line `LLM_AGENT_STATUS_STATS=1` asks for, on stderr: the counts and milliseconds of
 * {@link TreeStats}, the walk's, the output's, and the time since the process started
 * (`startMs`: Node's start-up and the modules loaded before the command ran).
 */
function writeStats(
  io: CommandIo,
  stats: TreeStats & { walkMs?: number; earlyHelpers?: boolean },
  startedAt: number,
  treeAt: number,
): void {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  const ms = Object.fromEntries(
    Object.entries(stats.ms).map(([key, value]) => [key, round(value)]),
  );
  const line = {
    ...stats,
    ms: {
      start: round(startedAt),
      walk: round(stats.walkMs ?? 0),
      ...ms,
      output: round(performance.now() - treeAt),
      total: round(performance.now()),
    },
  };
  delete line.walkMs;
  io.stderr.write(`llm-agent status stats: ${JSON.stringify(line)}\n`);
}

function inTree(root: RunNode, node: RunNode): boolean {
  for (const member of walkTree([root])) if (member === node) return true;
  return false;
}
