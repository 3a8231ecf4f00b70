import { type Command, parseCommandLine } from './command.ts';
import { requireDatabaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * `llm-agent db migrate`: bring the PostgreSQL store's schema to this version. Migrations are
 * applied only by this command, never by a store on its own: a store started on an older or
 * newer schema refuses to run and says so.
 *
 * @example
 * await dbCommand.run(['migrate', '--database', 'postgres://127.0.0.1/agents'], io);
 */
export const dbCommand: Command = {
  name: 'db',
  help: `Usage: llm-agent db migrate [--database URL] [--schema NAME]

Apply the PostgreSQL store's migrations that the database lacks, in order, each in its own
transaction, under an advisory lock (two migrations at once take turns). Prints the versions
applied, or that the schema is current. Refuses a schema newer than this llm-agent.

Options:
  --database URL   the server (default: LLM_AGENT_DATABASE_URL)
  --schema NAME    the schema of the store's tables (default llm_agent)
  -h, --help       show this help

Exit codes: 0 migrated or current; 1 the database refused (the line says why); 2 a mistake
in the command (no URL, a bad schema name).
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('db', argv, {
      database: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    if (positionals.length !== 1 || positionals[0] !== 'migrate') {
      throw new UserError('db: the one subcommand is migrate (see llm-agent db --help)');
    }
    const url = requireDatabaseUrl('db migrate', values.database, io);
    const schema = (values.schema as string | undefined) ?? 'llm_agent';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      throw new UserError(
        `db migrate: --schema "${schema}" is not a schema name (lower-case letters, digits, _)`,
      );
    }
    const { PostgresStore } = await import('../store/postgres/postgres-store.ts');
    let applied: number[];
    try {
      applied = await PostgresStore.migrate({ connectionString: url, schema });
    } catch (error) {
      io.stderr.write(
        `llm-agent: db migrate: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return EXIT.failure;
    }
    io.stdout.write(
      applied.length === 0
        ? `The schema "${schema}" is current.\n`
        : `Applied migration${applied.length === 1 ? '' : 's'} ${applied.join(', ')} to the schema "${schema}".\n`,
    );
    return EXIT.ok;
  },
};
