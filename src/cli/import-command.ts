import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { blockingReadFileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import { peek } from '../transcript/peek.ts';
import { isAgentId } from '../transcript/records.ts';
import { SessionError } from '../transcript/session-error.ts';
import { type Command, parseCommandLine } from './command.ts';
import { connectStore, requireDatabaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * `llm-agent import FILE --database URL [--id RUN]`: a transcript file into the PostgreSQL
 * store, byte for byte — a run started on a laptop carries on on the cluster.
 *
 * @example
 * await importCommand.run(['runs/report-42.jsonl', '--database', url], io);
 */
export const importCommand: Command = {
  name: 'import',
  help: `Usage: llm-agent import FILE --database URL [--id RUN] [--schema NAME]

Bring the transcript FILE into the PostgreSQL store as the run RUN (default: FILE's name
without .jsonl): every line checked (checksum, fields, seqs), stored byte for byte, unowned.
A run left mid-work can then be carried on by a worker: submitted runs are taken, and a run
that was interrupted is revived on approval (\`llm-agent revive --database URL RUN\` after
\`llm-agent status --database URL\` shows it). The file is not changed.

Refused: a transcript a live process is writing (running), one with a torn last line or damage
(revive or salvage it first), a name already in the store.

Options:
  --database URL   the server (default: LLM_AGENT_DATABASE_URL)
  --id RUN         the run's name in the store (default: from FILE)
  --schema NAME    the store's schema (default llm_agent)
  -h, --help       show this help

Exit codes: 0 imported; 1 the database cannot be used; 2 a mistake (no such file, a run of that
name exists); 4 the file is not a whole, readable transcript.
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('import', argv, {
      database: { type: 'string' },
      id: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const url = requireDatabaseUrl('import', values.database, io);
    if (positionals.length !== 1) throw new UserError('import: give exactly one transcript FILE');
    const given = positionals[0] as string;
    const path = resolve(io.cwd, given);
    const run = (values.id as string | undefined) ?? basename(path).replace(/\.jsonl$/, '');
    if (!isAgentId(run)) {
      throw new UserError(
        `import: ${JSON.stringify(run)} is not a run name (1 to 64 letters, digits, . _ -): give --id`,
      );
    }
    const read = await peek(path, { fileSystem: blockingReadFileSystem });
    if (!read.ok) {
      throw new UserError(
        `import: ${terminalSafe(read.detail)}`,
        read.reason === 'missing' ? EXIT.usage : EXIT.unreadable,
      );
    }
    if (read.state === 'torn-tail') {
      throw new UserError(
        `import: ${given}: its last line is torn (${read.torn?.tornBytes ?? 0} bytes after the last record); open it with revive first, which repairs it`,
        EXIT.unreadable,
      );
    }
    if (await nodeFileSystem.isLocked(path).catch(() => false)) {
      throw new UserError(
        `import: ${given}: a live process is writing it; import it once that run has stopped`,
      );
    }
    const bytes = await readFile(path).catch((error: unknown) => {
      throw new UserError(`import: cannot read ${given} (${String(error)})`, EXIT.failure);
    });
    const store = await connectStore('import', url, values.schema as string | undefined);
    try {
      await store.importBytes(run, bytes.subarray(0, read.validBytes));
    } catch (error) {
      if (SessionError.isInstance(error)) {
        throw new UserError(
          `import: ${error.code === 'exists' ? `a run named ${run} exists in the database (give another --id)` : terminalSafe(error.message)}`,
          error.code === 'exists' ? EXIT.usage : EXIT.unreadable,
        );
      }
      throw error;
    } finally {
      await store.close();
    }
    io.stdout.write(`Imported ${given} as ${run} (${read.records.length} records).\n`);
    return EXIT.ok;
  },
};
