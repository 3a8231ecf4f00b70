import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startLocalPostgres } from '../../bench/local-postgres.ts';

/*
 * A PostgreSQL for tests: DATABASE_URL when it is set, otherwise a throw-away cluster started
 * from the installed binaries (initdb, pg_ctl) on a Unix socket and removed at the end. No
 * server is a failure: the test that needed it fails. Each caller gets a schema of its own,
 * dropped at the end, so test files can share one server.
 */

/** A server and a fresh schema on it. */
export interface TestDatabase {
  url: string;
  schema: string;
  /** Where the server came from, for the test's log. */
  source: string;
  /** Another fresh schema on the same server (dropped at `stop`). */
  newSchema(): Promise<string>;
  stop(): Promise<void>;
}

let counter = 0;

/** Start (or reach) a server and make a schema; throws, naming what is missing, when neither works. */
export async function testDatabase(): Promise<TestDatabase> {
  const given = process.env.DATABASE_URL;
  let url: string;
  let source: string;
  let stopServer: () => Promise<void> = async () => undefined;
  if (given !== undefined && given !== '') {
    url = given;
    source = 'DATABASE_URL';
  } else {
    const folder = await mkdtemp(join(tmpdir(), 'llm-agent-pg-'));
    const server = await startLocalPostgres(folder);
    if (!server.ok) {
      throw new Error(
        `PostgreSQL is needed for this test: set DATABASE_URL or install the server binaries (${server.reason})`,
      );
    }
    url = server.url;
    source = `a throw-away cluster (${server.version})`;
    stopServer = server.stop;
  }
  const schemas: string[] = [];
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const newSchema = async (): Promise<string> => {
    counter += 1;
    const schema = `llm_t_${process.pid}_${counter}`;
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    schemas.push(schema);
    return schema;
  };
  const schema = await newSchema();
  return {
    url,
    schema,
    source,
    newSchema,
    async stop() {
      for (const name of schemas) {
        await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).catch(() => undefined);
      }
      await admin.end().catch(() => undefined);
      await stopServer();
    },
  };
}
