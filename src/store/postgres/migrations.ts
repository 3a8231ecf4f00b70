import type { PoolClient } from 'pg';

/**
 * The PostgreSQL store's schema, as numbered migrations. A migration is never edited once
 * released: a change is a new one. `llm-agent db migrate` applies the missing ones, in order,
 * each in its own transaction, under an advisory lock so two migrators never race; a store
 * refuses to start on a schema older or newer than {@link SCHEMA_VERSION} (docs/store.md).
 *
 * Tables (in the store's schema, `llm_agent` by default):
 * - `runs`: one row per run — who owns it (`owner`, a worker incarnation), the fencing `epoch`
 *   bumped by every takeover, the lease, the last seq written;
 * - `records`: one row per record — the exact v1 line (`line`, bytes, checksum included: an
 *   export is byte-identical to a file), its type, and the epoch of the writer that wrote it;
 * - `schema_migrations`: the versions applied.
 *
 * Version 2 adds what workers look for: `status` — how the run was last left by a writer that
 * let it go (`queued`: never answered; `open`, `finished`, `failed`, `stopped`; and the
 * supervisor's `awaiting-approval`, `approved`, `capped`) — and `revivals_used`. The records
 * stay the truth; these columns are what a writer's release or a supervisor's decision wrote.
 *
 * Version 3 adds child runs — `parent_run` (the run whose `spawn_agent` started it) and `depth`
 * (0 for a root) — the run's size in `bytes` (its lines), an index of checkpoints (so `status`
 * folds each run from its last checkpoint), and a notification on channel `llm_agent_runs` (payload `schema/run`)
 * whenever a run's owner or status changes, so that a parent waiting in `task_wait` on one
 * machine wakes when its child, run or revived on another, ends.
 *
 * Version 4 adds each run's `summary`: the state its records fold to (the JSON a checkpoint
 * holds — revivals, open calls, the last turn, its halt, the bytes its token estimate counts),
 * replaced by the same statement as every append, so that `status --database` reads one row
 * per run instead of folding records. Null for a run not written since: read from its records.
 */
interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'runs and records',
    sql: (s) => `
CREATE TABLE ${s}.runs (
  run_id        text PRIMARY KEY,
  owner         text,
  epoch         bigint NOT NULL DEFAULT 1,
  lease_expires timestamptz,
  last_seq      bigint NOT NULL DEFAULT -1,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE ${s}.records (
  run_id text   NOT NULL REFERENCES ${s}.runs (run_id) ON DELETE CASCADE,
  seq    bigint NOT NULL,
  epoch  bigint NOT NULL,
  type   text   NOT NULL,
  line   bytea  NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX runs_lease ON ${s}.runs (lease_expires) WHERE owner IS NOT NULL;
`,
  },
  {
    version: 2,
    name: 'run status for workers',
    sql: (s) => `
ALTER TABLE ${s}.runs ADD COLUMN status text NOT NULL DEFAULT 'open'
  CHECK (status IN ('queued', 'open', 'finished', 'failed', 'stopped',
                    'awaiting-approval', 'approved', 'capped'));
ALTER TABLE ${s}.runs ADD COLUMN revivals_used int NOT NULL DEFAULT 0;
CREATE INDEX runs_work ON ${s}.runs (status, created_at) WHERE owner IS NULL;
`,
  },
  {
    version: 3,
    name: 'child runs and run notifications',
    sql: (s) => `
ALTER TABLE ${s}.runs ADD COLUMN parent_run text REFERENCES ${s}.runs (run_id);
ALTER TABLE ${s}.runs ADD COLUMN depth int NOT NULL DEFAULT 0;
ALTER TABLE ${s}.runs ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
UPDATE ${s}.runs SET bytes = (
  SELECT coalesce(sum(octet_length(line)), 0) FROM ${s}.records WHERE records.run_id = runs.run_id);
CREATE INDEX runs_parent ON ${s}.runs (parent_run) WHERE parent_run IS NOT NULL;
CREATE INDEX records_checkpoints ON ${s}.records (run_id, seq) WHERE type = 'checkpoint';
CREATE FUNCTION ${s}.notify_run_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('llm_agent_runs', TG_TABLE_SCHEMA || '/' || NEW.run_id);
  RETURN NEW;
END
$$;
CREATE TRIGGER runs_changed AFTER UPDATE OF owner, status ON ${s}.runs
  FOR EACH ROW WHEN (OLD.owner IS DISTINCT FROM NEW.owner OR OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION ${s}.notify_run_change();
`,
  },
  {
    version: 4,
    name: 'run summaries',
    sql: (s) => `
ALTER TABLE ${s}.runs ADD COLUMN summary json;
`,
  },
  {
    version: 5,
    name: 'runs the fleet cannot read, parked for a person',
    sql: (s) => `
ALTER TABLE ${s}.runs DROP CONSTRAINT runs_status_check;
ALTER TABLE ${s}.runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('queued', 'open', 'finished', 'failed', 'stopped',
                    'awaiting-approval', 'approved', 'capped', 'unreadable'));
ALTER TABLE ${s}.runs ADD COLUMN status_detail text;
`,
  },
];

/**
 * The schema version this version of the store reads and writes.
 *
 * @example
 * console.log(`this llm-agent reads and writes schema version ${SCHEMA_VERSION}`);
 */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * A schema name the store accepts: lower-case letters, digits and `_`, starting with a letter
 * or `_`, at most 63 characters — so that it can stand in SQL unquoted-safe and quoted alike.
 *
 * @example
 * quoteSchema('llm_agent'); // '"llm_agent"'
 */
export function quoteSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError(
      `"${schema}" is not a schema name the store accepts (lower-case letters, digits, _)`,
    );
  }
  return `"${schema}"`;
}

/**
 * The version of the store's schema in the database: 0 when nothing was migrated yet.
 *
 * @example
 * const version = await schemaVersion(client, 'llm_agent');
 */
export async function schemaVersion(client: PoolClient, schema: string): Promise<number> {
  const table = await client.query<{ present: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AS present',
    [`${quoteSchema(schema)}.schema_migrations`],
  );
  if (table.rows[0]?.present !== true) return 0;
  const found = await client.query<{ version: number | null }>(
    `SELECT max(version)::int AS version FROM ${quoteSchema(schema)}.schema_migrations`,
  );
  return found.rows[0]?.version ?? 0;
}

/**
 * Apply the migrations the schema lacks, in order, each in one transaction, holding an
 * advisory lock for the whole so that two migrators take turns; `upTo` stops at an older
 * version (to test an upgrade). Returns the versions applied
 * (none when the schema is current). A schema newer than this version is refused.
 *
 * @example
 * const applied = await migrate(client, 'llm_agent'); // [1] on a fresh database
 */
export async function migrate(
  client: PoolClient,
  schema: string,
  upTo: number = SCHEMA_VERSION,
): Promise<number[]> {
  const s = quoteSchema(schema);
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [`llm-agent:${schema}`]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
         version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const current = await schemaVersion(client, schema);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `the schema "${schema}" is at version ${current}, newer than this llm-agent's ${SCHEMA_VERSION}: use a newer llm-agent`,
      );
    }
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current || migration.version > upTo) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql(s));
        await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`llm-agent:${schema}`]);
  }
}
