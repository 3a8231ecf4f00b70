import { realpath } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { EXIT } from '../render/exit-codes.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { connectStore, requireDatabaseUrl } from '../runs/database-store.ts';
import { UserError } from '../runs/user-error.ts';
import type { ImportedRun } from '../store/postgres/import-run.ts';
import { type CheckedFile, openCheckedFile, readChunks } from '../transcript/checked-file.ts';
import { nodeFileSystem } from '../transcript/file-system.ts';
import { isAgentId } from '../transcript/records.ts';
import { scanTranscript } from '../transcript/scan-transcript.ts';
import { TranscriptError } from '../transcript/transcript-error.ts';
import { type Command, parseCommandLine } from './command.ts';

/** The largest file `import` reads: a larger one is refused before its first byte is read. */
const IMPORT_MAX_BYTES = 1024 ** 3;

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
(revive or salvage it first), a name already in the store, anything but a regular file (a FIFO,
a device), and a file larger than 1 GiB is refused before it is read. FILE may be a symbolic
link: it is resolved once, and the file found is opened once, checked and read through that one
descriptor (a path swapped meanwhile is not followed). It is read in 1 MiB chunks and stored in
batches in one transaction, so memory stays small whatever the size of FILE.

Options:
  --database URL   the server (default: LLM_AGENT_DATABASE_URL)
  --id RUN         the run's name in the store (default: from FILE)
  --schema NAME    the store's schema (default llm_agent)
  -h, --help       show this help

Exit codes: 0 imported; 1 the database cannot be used; 2 a mistake (no such file, a run of that
name exists); 4 the file is not a whole, readable transcript (or not a regular file, or too
large).
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
    const { file, real } = await openForImport(path, given);
    let imported: ImportedRun;
    try {
      const validBytes = await checkedLength(file, { path, real, given });
      const store = await connectStore('import', url, values.schema as string | undefined, {
        invocation: io.invocation,
      });
      try {
        imported = await store.importStream(
          run,
          readChunks(file.fileSystem, file.fd, 0, validBytes),
        );
      } catch (error) {
        throw storeRefusal(error, run);
      } finally {
        await store.close();
      }
    } finally {
      await nodeFileSystem.close(file.fd).catch(() => undefined);
    }
    io.stdout.write(`Imported ${given} as ${run} (${imported.records} records).\n`);
    return EXIT.ok;
  },
};

/** FILE resolved once and opened once, checked through its descriptor; a refusal as a UserError. */
async function openForImport(
  path: string,
  given: string,
): Promise<{ file: CheckedFile; real: string }> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new UserError(`import: ${terminalSafe(given)}: no such file`, EXIT.usage);
  }
  const opened = await openCheckedFile(real, IMPORT_MAX_BYTES);
  if ('fd' in opened) return { file: opened, real };
  const why =
    opened.reason === 'too-large'
      ? opened.detail.replace(/more than the bound of \d+$/, "more than import's bound of 1 GiB")
      : opened.reason === 'link'
        ? `${real}: is a symbolic link now (swapped after it was resolved): not followed`
        : opened.detail;
  throw new UserError(
    `import: ${terminalSafe(why)}`,
    opened.reason === 'missing' ? EXIT.usage : EXIT.unreadable,
  );
}

/**
 * Scan the file through its descriptor (every line checked, in constant memory) and return the
 * length of its whole records; a refusal (damage, a torn last line, a live writer) as a UserError.
 */
async function checkedLength(
  file: CheckedFile,
  names: { path: string; real: string; given: string },
): Promise<number> {
  const { path, real, given } = names;
  const read = await scanTranscript(path, { fd: file.fd, fileSystem: file.fileSystem });
  if (!read.ok) {
    throw new UserError(
      `import: ${terminalSafe(read.detail)}`,
      read.reason === 'missing' ? EXIT.usage : EXIT.unreadable,
    );
  }
  if (read.state === 'torn-tail') {
    throw new UserError(
      `import: ${terminalSafe(given)}: its last line is torn (${read.torn?.tornBytes ?? 0} bytes after the last record); open it with revive first, which repairs it`,
      EXIT.unreadable,
    );
  }
  // The lock table is looked up by the path: only an answer about the file read counts.
  const atPath = await nodeFileSystem.identityOf(real).catch(() => null);
  const opened = await nodeFileSystem.identity(file.fd);
  const samePath = atPath !== null && atPath.dev === opened.dev && atPath.ino === opened.ino;
  if (!samePath || (await nodeFileSystem.isLocked(real).catch(() => false))) {
    throw new UserError(
      samePath
        ? `import: ${terminalSafe(given)}: a live process is writing it; import it once that run has stopped`
        : `import: ${terminalSafe(given)}: it was replaced while it was read; import it again`,
      samePath ? EXIT.usage : EXIT.unreadable,
    );
  }
  return read.validBytes;
}

/** A store's refusal as the command's error. */
function storeRefusal(error: unknown, run: string): unknown {
  if (!TranscriptError.isInstance(error)) return error;
  return new UserError(
    `import: ${error.code === 'exists' ? `a run named ${run} exists in the database (give another --id)` : terminalSafe(error.message)}`,
    error.code === 'exists' ? EXIT.usage : EXIT.unreadable,
  );
}
