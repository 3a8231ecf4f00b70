import { type Command, integerOption, parseCommandLine } from './command.ts';
import { writeLine } from '../runs/command-io.ts';
import type { CommandIo } from '../runs/command-io.ts';
import { connectStore, databaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import { findTranscripts } from '../runs/find-transcripts.ts';
import { databaseUiSource } from '../ui/database-ui-source.ts';
import { fileUiSource } from '../ui/file-ui-source.ts';
import { startUiServer } from '../ui/ui-server.ts';
import type { UiSource } from '../ui/ui-source.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * `llm-agent ui PATH… [--port N]`: a local web view of the run trees at PATH (the page of
 * `show --html`, refreshed as the transcripts change), with the revival plan and a Confirm
 * button that runs `llm-agent revive --yes -- PATH…`. With `--database URL`, the runs of the
 * PostgreSQL store instead, and Confirm approves the runs awaiting approval (`llm-agent
 * revive --database URL --yes -- RUN…`) for a worker to revive. Serves 127.0.0.1 until Ctrl-C or
 * SIGTERM.
 *
 * @example
 * await uiCommand.run(['runs/', '--port', '8080'], io); // prints http://127.0.0.1:8080/TOKEN/
 */
export const uiCommand: Command = {
  name: 'ui',
  help: `Usage: llm-agent ui [PATH…] [--port N] [--agents MODULE]
       llm-agent ui --database URL [--schema NAME] [--port N]

Serve a local web view of the runs at PATH (transcripts or folders; default: the current
folder) on 127.0.0.1, and print its URL, with a token: http://127.0.0.1:PORT/TOKEN/.
The page shows the run tree as status does (state, why, revivals, open calls, size, the
tokens a revive sends), filters by state, and links each run to its conversation (as show
--html draws it); everything is read again on each visit and redrawn when a transcript
changes. When runs are revivable, it shows the plan revive would carry out (children first,
calls in flight answered as interrupted, the token estimate) and a Confirm button. Nothing is spent before the click: Confirm runs
llm-agent revive --yes -- PATH… in a child process and streams its output to the page.

With --database URL, the page shows the runs of the PostgreSQL store as status --database
does (the worker holding each run and its lease too), redrawn when a run changes. Runs a
supervisor parked awaiting approval get the plan revive --database prints, and Confirm runs
llm-agent revive --database URL --yes -- RUN…, which approves them: a worker (llm-agent worker)
then revives each exactly once. The page shows the URL with its password masked.

Only this machine can connect, and only with the token (a new one each start), which is
the first part of every path: a request without it is refused (403). No cookie is set (a
browser sends cookies to every port of 127.0.0.1), so another local server the browser
visits learns nothing. Reviving needs the token in a request header and the page's own
origin, so another web site cannot trigger it. Runs until Ctrl-C or SIGTERM (a revive still
running is stopped cleanly: its runs stay revivable).

Options:
  --port N          the port to listen on (default 0: any free port)
  --agents MODULE   passed to revive (see llm-agent revive --help; files only)
  --database URL    the runs of the PostgreSQL store instead of files (no PATH then)
  --schema NAME     the store's schema (default llm_agent)
  -h, --help        show this help

Exit codes: 0 stopped by Ctrl-C or SIGTERM; 1 the database cannot be used; 2 a PATH does
not exist, the port is taken, or a bad option.
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('ui', argv, {
      port: { type: 'string' },
      agents: { type: 'string' },
      database: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const port = integerOption('ui', '--port', values.port as string | undefined, 0);
    if (port > 65535) throw new UserError(`ui: --port wants a port ≤ 65535, not ${port}`);
    const source = await sourceOf(values, positionals, io);
    let server: Awaited<ReturnType<typeof startUiServer>>;
    try {
      server = await startUiServer({
        source,
        cwd: io.cwd,
        env: io.env,
        port,
        log: (line) => writeLine(io.stderr, `ui: ${line}`),
        ...(io.invocation === undefined ? {} : { invocation: io.invocation }),
      });
    } catch (error) {
      // Nothing will close it otherwise: a store's pool would keep the process alive.
      await source.close();
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new UserError(`ui: cannot listen on 127.0.0.1:${port} (${code})`);
    }
    writeLine(io.stdout, server.url);
    writeLine(io.stderr, 'Serving until Ctrl-C; open the URL above (it holds the token).');
    if (io.onInterrupt === undefined) {
      // Nobody can interrupt (in-process): serve until the process ends.
      await new Promise<void>(() => undefined);
    }
    await new Promise<void>((done) => {
      const stop = io.onInterrupt?.(() => {
        stop?.();
        done();
      });
    });
    await server.close();
    return EXIT.ok;
  },
};

/**
 * The runs the page shows: the store of `--database` (connected now, so that an unreachable
 * server or an old schema is said as one line before anything is served), or the transcripts
 * below the PATHs (a missing PATH said now too, not on the page).
 */
async function sourceOf(
  values: Record<string, string | boolean | undefined>,
  positionals: string[],
  io: CommandIo,
): Promise<UiSource> {
  const url = databaseUrl(values.database);
  const schema = values.schema as string | undefined;
  if (url === undefined) {
    if (schema !== undefined) throw new UserError('ui: --schema goes with --database URL');
    const paths = positionals.length === 0 ? ['.'] : positionals;
    await findTranscripts(paths, io.cwd);
    const agents = values.agents as string | undefined;
    return fileUiSource(
      paths,
      io.cwd,
      agents === undefined ? { env: io.env } : { agents, env: io.env },
    );
  }
  if (positionals.length > 0) throw new UserError('ui: give PATHs or --database URL, not both');
  // The workers load the agents; approving needs none.
  if (values.agents !== undefined) {
    throw new UserError('ui: --agents is for files; with --database the workers load the agents');
  }
  const store = await connectStore('ui', url, schema, {
    invocation: io.invocation,
  });
  return databaseUiSource(store, schema === undefined ? { url } : { url, schema });
}
