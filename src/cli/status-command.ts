import { type Command, integerOption, parseCommandLine } from './command.ts';
import { EXIT } from './exit-codes.ts';
import { findTranscripts } from './find-transcripts.ts';
import { statusExitCode, statusJson, statusText, summarize } from './format-status.ts';
import { jsonText } from './json-text.ts';
import { inspectTree } from './run-tree.ts';
import { steadyHeap } from './steady-heap.ts';

/**
 * The revival cap the CLI assumes when `--max-revivals` is not given.
 *
 * @example
 * integerOption('status', '--max-revivals', values['max-revivals'], DEFAULT_MAX_REVIVALS);
 */
export const DEFAULT_MAX_REVIVALS = 3;

/**
 * `llm-agent status [PATH…]`: every run at and below the paths, as a tree with its state.
 * Reads only (one `inspect` per transcript, constant cost each); writes nothing.
 *
 * @example
 * await statusCommand.run(['runs/', '--json'], io);
 */
export const statusCommand: Command = {
  name: 'status',
  help: `Usage: llm-agent status [PATH…] [--json] [--max-revivals N]

Show the runs recorded at and below each PATH (default: the current folder) as a tree.
A PATH is a transcript (X.jsonl, shown with its children in X.agents/) or a folder
(every *.jsonl below it, recursively). Nothing is written.

For each run: its agent id, type and label; its state — running (a live process holds
it), finished, revivable, capped (at its revival cap), unreadable, empty — and why;
revivals used and the cap; open calls (in flight or never started); the transcript's
size; and an estimate of the tokens a resume would send.

Options:
  --json             print the same as JSON (the shape is in docs/cli.md)
  --max-revivals N   the revival cap to judge runs against (default ${DEFAULT_MAX_REVIVALS})
  -h, --help         show this help

Exit codes:
  0  nothing needs doing (every run finished, running or empty)
  3  at least one run is revivable
  4  at least one transcript is unreadable (takes precedence over 3)
  5  runs are stopped at their revival cap, and nothing is revivable or unreadable
  2  a mistake in the command (a PATH that does not exist, a bad option)
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('status', argv, {
      json: { type: 'boolean' },
      'max-revivals': { type: 'string' },
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
    // A read-only command that ends when the folder is inspected: see steady-heap.ts.
    steadyHeap();
    const paths = await findTranscripts(positionals.length === 0 ? ['.'] : positionals, io.cwd);
    const roots = await inspectTree(paths, maxRevivals, io.cwd);
    if (values.json === true) {
      io.stdout.write(`${jsonText(statusJson(roots, maxRevivals), io.stdout)}\n`);
    } else {
      io.stdout.write(statusText(roots, io.out));
    }
    return statusExitCode(summarize(roots));
  },
};
