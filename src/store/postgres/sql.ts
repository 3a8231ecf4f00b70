import { createHash } from 'node:crypto';
/*
 * The PostgreSQL store's statements, each a function of the (quoted) schema name. Every write
 * to a run is one autocommit statement, so a paused worker never sits on a row lock.
 */

/**
 * A run's row as `status` reads it: the lease's expiry as the ISO text JavaScript writes
 * (milliseconds, UTC), made by the server — parsing 100,000 dates into `Date`s was a tenth of
 * `status --database`'s time.
 */
const ROW_COLUMNS = `run_id, owner, epoch, (lease_expires < now()) AS expired, last_seq, status,
       to_char(lease_expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS lease_expires,
       revivals_used, parent_run, depth, bytes, status_detail`;

/**
 * The statements, by name; each takes the quoted schema.
 *
 * @example
 * await pool.query(SQL.FENCE_CHECK('"llm_agent"'), [run, epoch]);
 */
export const SQL = {
  /**
   * The only way records reach a run: one statement that moves the run's `last_seq` — only
   * while `epoch` is the writer's and `last_seq` the last seq it wrote — and inserts the lines
   * with the seqs that follow, renewing the lease. Zero rows: the run was taken over (or another
   * writer got in), and nothing was written. Under READ COMMITTED the UPDATE waits for a
   * concurrent claim's row lock and re-checks the epoch on the committed row, so a claim that
   * commits first always wins.
   *
   * The run's summary (its state folded through these lines) is replaced in the same statement.
   *
   * $1 run, $2 epoch, $3 last seq written, $4 lines (bytea[]), $5 types (text[]), $6 lease ms,
   * $7 the summary (JSON text).
   */
  APPEND: (s: string): string => `
WITH fence AS (
  UPDATE ${s}.runs
  SET last_seq = last_seq + cardinality($4::bytea[]),
      bytes = bytes + (SELECT coalesce(sum(octet_length(b)), 0) FROM unnest($4::bytea[]) AS b),
      lease_expires = now() + $6::bigint * interval '1 millisecond',
      summary = $7::json
  WHERE run_id = $1 AND epoch = $2 AND last_seq = $3
  RETURNING run_id)
INSERT INTO ${s}.records (run_id, seq, epoch, type, line)
SELECT $1, $3::bigint + l.ord, $2, t.type, l.line
FROM fence,
     unnest($4::bytea[]) WITH ORDINALITY AS l(line, ord)
     JOIN unnest($5::text[]) WITH ORDINALITY AS t(type, ord) USING (ord)
RETURNING seq`,

  /** A run is still this writer's: $1 run, $2 epoch. */
  FENCE_CHECK: (s: string): string => `SELECT 1 FROM ${s}.runs WHERE run_id = $1 AND epoch = $2`,

  /** Renew a writer's lease while its epoch is current: $1 run, $2 epoch, $3 lease ms. */
  HEARTBEAT: (s: string): string => `
UPDATE ${s}.runs SET lease_expires = now() + $3::bigint * interval '1 millisecond'
WHERE run_id = $1 AND epoch = $2 AND owner IS NOT NULL
RETURNING 1`,

  /** Give a run up on a clean close, saying how it was left: $1 run, $2 epoch, $3 status, $4 revivals. */
  RELEASE: (s: string): string => `
UPDATE ${s}.runs SET owner = NULL, lease_expires = NULL, status = $3, revivals_used = $4
WHERE run_id = $1 AND epoch = $2`,

  /**
   * The work a worker may take — runs whose writer died (lease expired) and runs nobody holds
   * that are queued or approved — deepest first (children are revived before their parents),
   * then oldest. $1 how many.
   */
  WORK: (s: string): string => `
SELECT run_id, status, (owner IS NOT NULL) AS dead
FROM ${s}.runs
WHERE (owner IS NOT NULL AND lease_expires < now())
   OR (owner IS NULL AND status IN ('queued', 'approved'))
ORDER BY depth DESC, created_at
LIMIT $1`,

  /**
   * Fence a dead run without reviving it: a new epoch (its old writer can never append), no
   * owner, and why it waits. Only while its lease is still expired and it is still held, so of
   * several supervisors exactly one parks it. $1 run, $2 status.
   */
  PARK: (s: string): string => `
UPDATE ${s}.runs SET owner = NULL, lease_expires = NULL, epoch = epoch + 1, status = $2
WHERE run_id = $1 AND owner IS NOT NULL AND lease_expires < now()
RETURNING epoch`,

  /**
   * Let go of a run its taker found it cannot read, parked for a person: no owner, status
   * `unreadable`, and why. Only while the taker's epoch is current. $1 run, $2 epoch, $3 why.
   */
  PARK_UNREADABLE: (s: string): string => `
UPDATE ${s}.runs SET owner = NULL, lease_expires = NULL, status = 'unreadable', status_detail = $3
WHERE run_id = $1 AND epoch = $2
RETURNING 1`,

  /**
   * Give a run just taken back, as it was listed (`queued` or `approved`), when it could not be
   * read for a reason of the database's: unowned again, only while the taker's epoch is
   * current. $1 run, $2 epoch, $3 status.
   */
  GIVE_BACK: (s: string): string => `
UPDATE ${s}.runs SET owner = NULL, lease_expires = NULL, status = $3
WHERE run_id = $1 AND epoch = $2
RETURNING 1`,

  /** Set how an unowned run waits: $1 run, $2 status, $3 the status it must have now. */
  MARK: (s: string): string => `
UPDATE ${s}.runs SET status = $2 WHERE run_id = $1 AND owner IS NULL AND status = $3
RETURNING 1`,

  /** Every run with its owner, lease and status, for `status --database`. */
  RUNS: (s: string): string => `
SELECT ${ROW_COLUMNS}
FROM ${s}.runs ORDER BY run_id`,

  /**
   * Every run's row and its summary (the state its records fold to, as JSON text; null for a
   * run not written since the summary existed), for `status --database`.
   */
  SUMMARIES: (s: string): string => `
SELECT ${ROW_COLUMNS}, summary::text AS summary
FROM ${s}.runs ORDER BY run_id`,

  /** How many children each run with any has, for `status --database`. */
  CHILD_COUNTS: (s: string): string => `
SELECT parent_run, count(*)::int AS children
FROM ${s}.runs WHERE parent_run IS NOT NULL GROUP BY parent_run`,

  /**
   * What `status` folds for every run: the lines from its last checkpoint on (from the first
   * line when it has none), in run and seq order.
   */
  TAILS: (s: string): string => `
SELECT r.run_id, rec.seq, rec.line
FROM ${s}.runs r
CROSS JOIN LATERAL (
  SELECT coalesce(max(c.seq), 0) AS from_seq
  FROM ${s}.records c WHERE c.run_id = r.run_id AND c.type = 'checkpoint') cp
JOIN ${s}.records rec ON rec.run_id = r.run_id AND rec.seq >= cp.from_seq
ORDER BY r.run_id, rec.seq`,

  /** {@link SQL.TAILS} of some runs only: $1 runs (text[]). */
  TAILS_OF: (s: string): string => `
SELECT r.run_id, rec.seq, rec.line
FROM ${s}.runs r
CROSS JOIN LATERAL (
  SELECT coalesce(max(c.seq), 0) AS from_seq
  FROM ${s}.records c WHERE c.run_id = r.run_id AND c.type = 'checkpoint') cp
JOIN ${s}.records rec ON rec.run_id = r.run_id AND rec.seq >= cp.from_seq
WHERE r.run_id = ANY($1::text[])
ORDER BY r.run_id, rec.seq`,

  /**
   * Take a run over: a new epoch, this owner, a fresh lease — only when nobody holds it (no
   * owner, or a lease that expired by the server's clock). $1 run, $2 owner, $3 lease ms.
   */
  CLAIM: (s: string): string => `
UPDATE ${s}.runs
SET owner = $2, epoch = epoch + 1, lease_expires = now() + $3::bigint * interval '1 millisecond'
WHERE run_id = $1 AND (owner IS NULL OR lease_expires < now())
RETURNING epoch, last_seq`,

  /**
   * Take a run over only while it is still the work it was listed as — a dead run (held, lease
   * expired), or an unowned `queued` or `approved` one — so that a worker acting on a list that
   * went stale never takes a run another worker already carried on. $1 run, $2 owner, $3 lease
   * ms, $4 `dead` | `queued` | `approved`.
   */
  TAKE: (s: string): string => `
UPDATE ${s}.runs
SET owner = $2, epoch = epoch + 1, lease_expires = now() + $3::bigint * interval '1 millisecond',
    status = 'open'
WHERE run_id = $1
  AND CASE WHEN $4 = 'dead' THEN owner IS NOT NULL AND lease_expires < now()
           ELSE owner IS NULL AND status = $4 END
RETURNING epoch, last_seq`,

  /** Who holds a run, for a refusal: $1 run. */
  HOLDER: (s: string): string =>
    `SELECT owner, lease_expires, epoch FROM ${s}.runs WHERE run_id = $1`,

  /**
   * A new run, owned at epoch 1: $1 run, $2 owner, $3 lease ms, $4 the parent run (null for a
   * root; a child's depth is its parent's plus one; a parent the store does not hold leaves the
   * run a root rather than failing). No row back: a run of that name exists.
   */
  CREATE_RUN: (s: string): string => `
INSERT INTO ${s}.runs (run_id, owner, epoch, lease_expires, last_seq, parent_run, depth)
SELECT $1, $2, 1, now() + $3::bigint * interval '1 millisecond', -1,
       (SELECT run_id FROM ${s}.runs WHERE run_id = $4::text),
       coalesce((SELECT depth + 1 FROM ${s}.runs WHERE run_id = $4::text), 0)
ON CONFLICT (run_id) DO NOTHING
RETURNING epoch`,

  /**
   * A run submitted for a worker, whole in one statement: unowned, `queued`, with its lines
   * (`session-meta` and the task). $1 run, $2 lines (bytea[]), $3 types (text[]), $4 the parent
   * run or null, $5 the parent's writer's epoch: a child is submitted only while its parent's
   * epoch is still that one; $6 the summary (JSON text). No row back: a run of that name
   * exists, or the parent was taken over.
   */
  SUBMIT: (s: string): string => `
WITH created AS (
  INSERT INTO ${s}.runs (run_id, owner, epoch, lease_expires, last_seq, status, parent_run, depth, bytes, summary)
  SELECT $1, NULL, 1, NULL, cardinality($2::bytea[]) - 1, 'queued', $4::text,
         coalesce((SELECT depth + 1 FROM ${s}.runs WHERE run_id = $4::text), 0),
         (SELECT coalesce(sum(octet_length(b)), 0) FROM unnest($2::bytea[]) AS b), $6::json
  WHERE $4::text IS NULL
     OR EXISTS (SELECT 1 FROM ${s}.runs p WHERE p.run_id = $4::text AND p.epoch = $5::bigint FOR SHARE)
  ON CONFLICT (run_id) DO NOTHING
  RETURNING run_id)
${insertCreatedLines(s)}`,

  /** Where runs stand, for a join: $1 runs (text[]). */
  STANDING: (s: string): string => `
SELECT run_id, owner, status, depth FROM ${s}.runs WHERE run_id = ANY($1::text[])`,

  /** Whether a live writer holds a run: $1 run. No row for a run that does not exist. */
  HELD: (s: string): string => `
SELECT (owner IS NOT NULL AND lease_expires > now()) AS held FROM ${s}.runs WHERE run_id = $1`,

  /** A run's children that have not ended, for the limit on children at once: $1 parent run. */
  ACTIVE_CHILDREN: (s: string): string => `
SELECT count(*)::int AS active FROM ${s}.runs
WHERE parent_run = $1
  AND (owner IS NOT NULL OR status IN ('queued', 'open', 'approved', 'awaiting-approval'))`,

  /**
   * The first statement of an import's transaction: the run, unowned, with no records yet —
   * invisible to others until the transaction commits. $1 run. No row back: a run of that name
   * exists.
   */
  IMPORT_RUN: (s: string): string => `
INSERT INTO ${s}.runs (run_id, owner, epoch, lease_expires, last_seq, status, revivals_used, bytes)
VALUES ($1, NULL, 1, NULL, -1, 'finished', 0, 0)
ON CONFLICT (run_id) DO NOTHING
RETURNING run_id`,

  /** A batch of an import's lines at epoch 1: $1 run, $2 the first seq, $3 lines (bytea[]), $4 types (text[]). */
  IMPORT_LINES: (s: string): string => `
INSERT INTO ${s}.records (run_id, seq, epoch, type, line)
SELECT $1, $2::bigint + l.ord - 1, 1, t.type, l.line
FROM unnest($3::bytea[]) WITH ORDINALITY AS l(line, ord)
JOIN unnest($4::text[]) WITH ORDINALITY AS t(type, ord) USING (ord)`,

  /**
   * An import's last statement, how the run was left: $1 run, $2 last seq, $3 status, $4
   * revivals, $5 bytes, $6 the summary (JSON text).
   */
  IMPORT_DONE: (s: string): string => `
UPDATE ${s}.runs SET last_seq = $2, status = $3, revivals_used = $4, bytes = $5, summary = $6::json
WHERE run_id = $1`,

  /** Every line of a run in seq order: $1 run. */
  READ_LINES: (s: string): string =>
    `SELECT seq, line FROM ${s}.records WHERE run_id = $1 ORDER BY seq`,

  /** Whether a run exists: $1 run. */
  RUN_EXISTS: (s: string): string => `SELECT 1 FROM ${s}.runs WHERE run_id = $1`,

  /** Every run, sorted. */
  LIST_RUNS: (s: string): string => `SELECT run_id FROM ${s}.runs ORDER BY run_id`,
};

/**
 * The records of a run a statement's `created` CTE just made, at epoch 1: $1 the run, $2 its
 * lines (bytea[]), $3 their types (text[]), seqs from 0.
 */
function insertCreatedLines(s: string): string {
  return `INSERT INTO ${s}.records (run_id, seq, epoch, type, line)
SELECT $1, l.ord - 1, 1, t.type, l.line
FROM created,
     unnest($2::bytea[]) WITH ORDINALITY AS l(line, ord)
     JOIN unnest($3::text[]) WITH ORDINALITY AS t(type, ord) USING (ord)
RETURNING seq`;
}

const preparedNames = new Map<string, string>();

/**
 * `text` as a named statement: the `pg` driver prepares it once per connection, so the server
 * parses and plans a statement sent on every barrier once rather than each time (measured: half
 * the server's CPU per step). The name is a digest of the text (the schema is part of it), well
 * within PostgreSQL's 63 bytes.
 *
 * @example
 * await pool.query({ ...prepared(SQL.FENCE_CHECK('"llm_agent"')), values: [run, epoch] });
 */
export function prepared(text: string): { name: string; text: string } {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `llm_agent_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    preparedNames.set(text, name);
  }
  return { name, text };
}
