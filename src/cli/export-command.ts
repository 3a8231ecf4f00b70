import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isAgentId } from '../transcript/records.ts';
import { type Command, parseCommandLine } from './command.ts';
import { connectStore, requireDatabaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * `llm-agent export RUN --database URL [--out FILE]`: a run of the PostgreSQL store as a v1
 * transcript file, byte for byte what the store holds.
 *
 * @example
 * await exportCommand.run(['report-42', '--database', url, '--out', 'runs/report-42.jsonl'], io);
 */
export const exportCommand: Command = {
  name: 'export',
  help: `Usage: llm-agent export RUN --database URL [--out FILE] [--schema NAME]

Write the run RUN of the PostgreSQL store as a transcript: its records' lines, byte for byte
(checksums included), to FILE — created new, never over an existing file or through a link —
or to stdout. \`llm-agent status\`, \`show\` and \`revive\` read the file as any transcript;
\`llm-agent import\` brings it back.

Options:
  --database URL   the server (default: LLM_AGENT_DATABASE_URL)
  --out FILE       the transcript to create (a .jsonl file); default stdout
  --schema NAME    the store's schema (default llm_agent)
  -h, --help       show this help

Exit codes: 0 exported; 1 the database cannot be used or the run is unreadable; 2 a mistake in
the command (no such run, FILE exists).
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('export', argv, {
      database: { type: 'string' },
      out: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const url = requireDatabaseUrl('export', values.database, io);
    if (positionals.length !== 1) throw new UserError('export: give exactly one RUN');
    const run = positionals[0] as string;
    const out = values.out as string | undefined;
    if (out !== undefined && !out.endsWith('.jsonl')) {
      throw new UserError(
        `export: --out ${JSON.stringify(out)} must name a .jsonl file (status and revive find transcripts by that ending)`,
      );
    }
    const store = await connectStore('export', url, values.schema as string | undefined, {
      invocation: io.invocation,
    });
    let bytes: Buffer;
    try {
      const found = await store.read(run);
      if (!found.ok) {
        throw new UserError(
          `export: ${found.detail}`,
          found.reason === 'missing' ? EXIT.usage : EXIT.failure,
        );
      }
      bytes = await store.exportBytes(run);
    } finally {
      await store.close();
    }
    if (out === undefined) {
      io.stdout.write(bytes);
      return EXIT.ok;
    }
    const path = resolve(io.cwd, out);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UserError(
        code === 'EEXIST'
          ? `export: ${out} exists (export never writes over a file)`
          : `export: cannot create ${out} (${code ?? String(error)})`,
      );
    }
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    io.stderr.write(
      `Exported ${isAgentId(run) ? run : JSON.stringify(run)} to ${out} (${bytes.length} bytes).\n`,
    );
    return EXIT.ok;
  },
};
