import { type Command, integerOption, parseCommandLine } from './command.ts';
import { connectStore, databaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import { databaseOptions } from '../render/database-hint.ts';
import { UserError } from '../runs/user-error.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { terminalWidth } from './terminal-width.ts';

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
      // The status code loads while the connection is made and the schema checked.
      const [{ databaseStatus }, store] = await Promise.all([
        import('../runs/database-status.ts'),
        connectStore('status', url, values.schema as string | undefined, {
          invocation: io.invocation,
        }),
      ]);
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
    // The file readers are loaded for files only: --database never needs them.
    const { filesStatus } = await import('./status-files.ts');
    return await filesStatus(io, positionals, values, maxRevivals);
  },
};
