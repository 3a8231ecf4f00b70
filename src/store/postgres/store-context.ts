import type { Pool, PoolClient } from 'pg';
import type { TailState } from '../../transcript/tail-state.ts';
import { PostgresTranscriptWriter } from './postgres-writer.ts';

/**
 * What every part of the PostgreSQL store shares: its pool, its (quoted) schema, how it names
 * runs in messages, who it is and how long its leases last.
 *
 * @example
 * const writer = writerFor(context, 'main', 1, 0, state);
 */
export interface StoreContext {
  readonly pool: Pool;
  /** The quoted schema name. */
  readonly schema: string;
  /** The connection string without credentials, for messages (`postgres://host:5432/db`). */
  readonly label: string;
  /** This worker incarnation. */
  readonly owner: string;
  readonly leaseMs: number;
  readonly clock: () => Date;
  readonly checkpointBytes: number;
}

/**
 * `<database>#<run>`, the name of a run in messages — after checking that `run` is a run name
 * (1 to 200 characters, no control characters): anything else is a programmer's error.
 *
 * @example
 * const path = runPath(context, 'main'); // 'postgres://127.0.0.1:5432/agents#main'
 */
export function runPath(context: StoreContext, run: string): string {
  if (
    typeof run !== 'string' ||
    run === '' ||
    run.length > 200 ||
    [...run].some((character) => {
      const code = character.codePointAt(0) ?? 0;
      return code < 0x20 || code === 0x7f;
    })
  ) {
    throw new TypeError(
      `PostgresStore: "${String(run)}" is not a run name (1 to 200 characters, no control characters)`,
    );
  }
  return `${context.label}#${run}`;
}

/**
 * The one writer of `run` at `epoch`, which last wrote `lastSeq` and whose records fold to
 * `state`.
 *
 * @example
 * const writer = writerFor(context, 'main', 2, 14, state);
 */
export function writerFor(
  context: StoreContext,
  run: string,
  epoch: number,
  lastSeq: number,
  state: TailState,
): PostgresTranscriptWriter {
  return new PostgresTranscriptWriter({
    pool: context.pool,
    schema: context.schema,
    run,
    path: runPath(context, run),
    epoch,
    lastSeq,
    state,
    leaseMs: context.leaseMs,
    clock: context.clock,
    checkpointBytes: context.checkpointBytes,
  });
}

/**
 * A pool for the store, made with the `pg` package (an optional peer dependency: a clear error
 * when it is not installed).
 *
 * @example
 * const pool = await createPool({ connectionString: 'postgres://127.0.0.1/agents' });
 */
export async function createPool(options: {
  connectionString: string;
  maxConnections?: number;
  applicationName?: string;
}): Promise<Pool> {
  const pg = await pgModule();
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 4,
    application_name: options.applicationName ?? 'llm-agent',
  });
  // An idle connection the server closed is the pool's to replace, not the process's to die of.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * The `pg` package (an optional peer dependency), or a clear error when it is not installed.
 *
 * @example
 * const { Query } = await pgModule();
 */
export async function pgModule(): Promise<typeof import('pg')> {
  try {
    return ((await import('pg')) as unknown as { default: typeof import('pg') }).default;
  } catch {
    throw new Error('the PostgreSQL store needs the pg package: npm install pg');
  }
}

/**
 * Run `body` on one connection of the pool, given back afterwards.
 *
 * @example
 * const version = await withClient(pool, (client) => schemaVersion(client, 'llm_agent'));
 */
export async function withClient<T>(
  pool: Pool,
  body: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    return await body(client);
  } finally {
    client.release();
  }
}

/**
 * The connection string without credentials: `postgres://host:port/db`.
 *
 * @example
 * databaseLabel('postgres://me:secret@db:5432/agents'); // 'postgres://db:5432/agents'
 */
export function databaseLabel(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'postgres';
  }
}
