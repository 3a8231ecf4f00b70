import { type Command, integerOption, parseCommandLine } from './command.ts';
import type { CommandIo } from '../runs/command-io.ts';
import { connectStore, databaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import {
  type StatusNext,
  statusExitCode,
  statusJson,
  statusText,
  summarize,
} from '../render/format-status.ts';
import { databaseOptions } from '../render/database-hint.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { jsonText } from '../render/json-text.ts';
import { allDemoRuns } from '../runs/demo-runs.ts';
import { planTreeRevival } from '../runs/tree-revival-plan.ts';
import { newTreeStats, type TreeStats } from '../runs/inspect-tree.ts';
import { statusTree } from '../runs/status-tree.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { UserError } from '../runs/user-error.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';

/**
 * `llm-agent status [PATH…]`: every run at and below the paths, as a tree with its state.
 * Reads only (one `inspect` per transcript, constant cost each); writes nothing beside the
 * transcripts (the status index it keeps for a large folder is in the user's cache).
 *
 * @example
 * await statusCommand.run(['runs/', '--json'], io);
 */
export const statusCommand: Command = {
  name: 'status',
  help: `Usage: llm-agent status [PATH…] [--json] [--wide] [--verify] [--max-revivals N] [--agents MODULE]
       llm-agent status --database URL [--schema NAME] [--json] [--verify]

Show the runs recorded at and below each PATH (default: the current folder) as a tree.
A PATH is a transcript (X.jsonl, shown with its children in X.agents/) or a folder
(every *.jsonl below it, recursively). Nothing is written beside the transcripts; over 500
of them, what was read of each is kept in the user's cache (~/.cache/llm-agent/status/) and
used while the transcript is unchanged (LLM_AGENT_STATUS_INDEX=off: never).

For each run: its agent id, type and label; its state — running (a live process holds
it), finished, revivable (its process died), failed (every model backend failed), stopped
(SIGINT, SIGTERM), capped (at its revival cap), unreadable, empty — and why;
revivals used and the cap; open calls (in flight or never started); the transcript's
size; and an estimate of the tokens a resume would send.

The table fits the terminal's width (COLUMNS, or the terminal's own): RUN, TYPE, LABEL and
WHY are cut with …, then the least useful columns are left out.

Options:
  --json             print the same as JSON (the shape is in docs/cli.md)
  --wide             every column whole, whatever the terminal's width
  --verify           read every record of every transcript, not only its end: damage
                     anywhere (even in what a revive will not read) is unreadable, and a
                     checkpoint that disagrees with the records before it is found
  --max-revivals N   the revival cap to judge runs against (default ${DEFAULT_MAX_REVIVALS})
  --agents MODULE    the agents module the runs were started with, for the revive
                     command status suggests (it is not loaded)
  --database URL     the runs of the PostgreSQL store instead of files: state (running,
                     dead, queued, finished, failed, stopped, awaiting-approval,
                     approved, capped), owner, lease
  --schema NAME      the store's schema (default llm_agent)
  -h, --help         show this help

Exit codes:
  0  nothing needs doing (every run finished, running or empty)
  3  at least one run is revivable (revivable, failed or stopped)
  4  at least one transcript is unreadable (takes precedence over 3)
  5  runs are stopped at their revival cap, and nothing is revivable or unreadable
  2  a mistake in the command (a PATH that does not exist, a bad option)
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('status', argv, {
      json: { type: 'boolean' },
      wide: { type: 'boolean' },
      verify: { type: 'boolean' },
      'max-revivals': { type: 'string' },
      agents: { type: 'string' },
      database: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const maxRevivals = integerOption(
      'status',
      '--max-revivals',
      values['max-revivals'] as string | undefined,
      DEFAULT_MAX_REVIVALS,
    );
    const url = databaseUrl(values.database);
    if (url !== undefined) {
      if (positionals.length > 0) {
        throw new UserError('status: give PATHs or --database URL, not both');
      }
      const { databaseStatus } = await import('../runs/database-status.ts');
      const store = await connectStore('status', url, values.schema as string | undefined, {
        invocation: io.invocation,
      });
      try {
        return await databaseStatus(io, store, {
          json: values.json === true,
          width: terminalWidth(io),
          wide: values.wide === true,
          maxRevivals,
          verify: values.verify === true,
          next: {
            invocation: io.invocation ?? 'llm-agent',
            target: databaseOptions(url, values.schema as string | undefined),
          },
        });
      } finally {
        await store.close();
      }
    }
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
  },
};

/**
 * The width to fit: `COLUMNS` when it is a positive whole number, else the terminal's own
 * (stdout's `columns`), else no limit (output to a pipe or a file is not cut).
 *
 * @example
 * terminalWidth({ ...io, env: { COLUMNS: '60' } }); // 60
 */
export function terminalWidth(io: Pick<CommandIo, 'env' | 'stdout'>): number {
  const fromEnv = io.env.COLUMNS ?? '';
  if (/^[1-9]\d{0,4}$/.test(fromEnv)) return Number(fromEnv);
  const columns = (io.stdout as { columns?: unknown }).columns;
  return typeof columns === 'number' && columns > 0 ? columns : Number.POSITIVE_INFINITY;
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
