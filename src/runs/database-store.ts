import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import { type CommandIo, hintCommand } from './command-io.ts';
import { databaseOptions, maskedNote } from '../render/database-hint.ts';
import { EXIT } from '../render/exit-codes.ts';
import { UserError } from './user-error.ts';

/**
 * The database a command that also works on files was pointed at with `--database URL`, or
 * undefined for files. `LLM_AGENT_DATABASE_URL` is not read here: with it set, `status runs/`
 * must still mean the folder.
 *
 * @example
 * const url = databaseUrl(values.database); // undefined: work on files
 */
export function databaseUrl(given: unknown): string | undefined {
  return typeof given === 'string' && given !== '' ? given : undefined;
}

/**
 * The database of a command that works only on the database: `--database URL`, else
 * `LLM_AGENT_DATABASE_URL`; neither is the user's mistake, said in one line.
 *
 * @example
 * const url = requireDatabaseUrl('export', values.database, io);
 */
export function requireDatabaseUrl(command: string, given: unknown, io: CommandIo): string {
  const fromEnv = io.env.LLM_AGENT_DATABASE_URL;
  const url = databaseUrl(given) ?? (fromEnv === '' ? undefined : fromEnv);
  if (url === undefined) {
    throw new UserError(`${command}: give --database URL (or set LLM_AGENT_DATABASE_URL)`);
  }
  return url;
}

/**
 * Connect to the PostgreSQL store of `url` (schema `schema`), turning what a person must fix —
 * an unreachable server, a schema to migrate — into one line. A schema to migrate is told the
 * `db migrate` command that does it for this URL and schema, started the way the user runs
 * the CLI (`invocation`, default `llm-agent`), so that it runs when pasted.
 *
 * @example
 * const store = await connectStore(command, url, 'llm_agent', { invocation: io.invocation });
 */
export async function connectStore(
  command: string,
  url: string,
  schema: string | undefined,
  options: { leaseMs?: number; invocation?: string | undefined } = {},
): Promise<PostgresStore> {
  const { PostgresStore, SchemaVersionError, SCHEMA_VERSION } = await import(
    '../store/postgres/postgres-store.ts'
  );
  try {
    return await PostgresStore.connect({
      connectionString: url,
      ...(schema === undefined ? {} : { schema }),
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    });
  } catch (error) {
    let message = error instanceof Error ? error.message : String(error);
    if (error instanceof SchemaVersionError && error.found < SCHEMA_VERSION) {
      // The store says `llm-agent db migrate --database URL` to any caller; here the command is
      // known in full.
      const target = databaseOptions(url, schema);
      const { invocation } = options;
      const migrate = hintCommand(
        invocation === undefined ? {} : { invocation },
        `db migrate ${target.args}`,
      );
      const cut = message.lastIndexOf(': run ');
      message = `${cut < 0 ? message : message.slice(0, cut)}: run ${migrate}${maskedNote(target.masked)}`;
    }
    // Not a mistake in the command: the server, or its schema, needs someone's attention.
    throw new UserError(`${command}: cannot use the database: ${message}`, EXIT.failure);
  }
}
