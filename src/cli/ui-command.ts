import { type Command, integerOption, parseCommandLine, writeLine } from './command.ts';
import { EXIT } from './exit-codes.ts';
import { findTranscripts } from './find-transcripts.ts';
import { startUiServer } from './ui-server.ts';
import { fileUiSource } from './ui-source.ts';
import { UserError } from './user-error.ts';

/**
 * `llm-agent ui PATH… [--port N]`: a local web view of the run trees at PATH (the page of
 * `show --html`, refreshed as the transcripts change), with the revival plan and a Confirm
 * button that runs `llm-agent revive PATH… --yes`. Serves 127.0.0.1 until Ctrl-C or SIGTERM.
 *
 * @example
 * await uiCommand.run(['runs/', '--port', '8080'], io); // prints http://127.0.0.1:8080/?token=…
 */
export const uiCommand: Command = {
  name: 'ui',
  help: `Usage: llm-agent ui [PATH…] [--port N] [--agents MODULE]

Serve a local web view of the runs at PATH (transcripts or folders; default: the current
folder) on 127.0.0.1, and print its URL, with a token: http://127.0.0.1:PORT/?token=TOKEN.
The page shows the run tree as status does (state, why, revivals, open calls, size, the
tokens a revive sends), filters by state, and links each run to its conversation (as show
--html draws it); everything is read again on each visit and redrawn when a transcript
changes. When runs are revivable, it shows the plan revive would carry out (children first,
calls in flight answered as interrupted, the token estimate) and a Confirm button. Nothing is spent before the click: Confirm runs
llm-agent revive PATH… --yes in a child process and streams its output to the page.

Only this machine can connect, and only with the token (a new one each start): a request
without it is refused (403). Reviving needs the token in a request header and the page's own
origin, so another web site cannot trigger it. Runs until Ctrl-C or SIGTERM (a revive still
running is stopped cleanly: its runs stay revivable).

Options:
  --port N          the port to listen on (default 0: any free port)
  --agents MODULE   passed to revive (see llm-agent revive --help)
  --database URL    not supported yet: the page reads transcript files
  -h, --help        show this help

Exit codes: 0 stopped by Ctrl-C or SIGTERM; 2 a PATH does not exist, the port is taken, or
a bad option.
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
    if (values.database !== undefined || values.schema !== undefined) {
      throw new UserError('ui: reads transcript files only; --database is not supported yet');
    }
    const port = integerOption('ui', '--port', values.port as string | undefined, 0);
    if (port > 65535) throw new UserError(`ui: --port wants a port ≤ 65535, not ${port}`);
    const paths = positionals.length === 0 ? ['.'] : positionals;
    // A missing PATH is said now, as one line, not on the page.
    await findTranscripts(paths, io.cwd);
    const agents = values.agents as string | undefined;
    let server: Awaited<ReturnType<typeof startUiServer>>;
    try {
      server = await startUiServer({
        source: fileUiSource(paths, io.cwd, agents),
        cwd: io.cwd,
        env: io.env,
        port,
      });
    } catch (error) {
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
