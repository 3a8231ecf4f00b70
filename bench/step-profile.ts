import pg from 'pg';
import { z } from 'zod';
import { Loop } from '../src/loop/loop.ts';
import type { ToolDefinition } from '../src/loop/types.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { countingModel, OPENING_TEXT, STEP_TOOL_NAME, stepToolOutput } from './counting-model.ts';

/**
 * What one step of our loop costs PostgreSQL, counted rather than timed: the statements the
 * store sends (each one round trip: the store does not pipeline), by kind; the transactions
 * that write (each its own commit: autocommit, or the one transaction of a create); the WAL written
 * (`pg_current_wal_lsn()` diffs — server-wide, so other writers on a shared server add to it);
 * the notifications sent (a LISTEN on the store's channel during the run); and the time the
 * store's queries waited on locks (`pg_stat_activity` sampled every millisecond).
 *
 * @example
 * const profile = await stepProfile(url, admin, 'bench_profile', 200);
 */
export async function stepProfile(url: string, admin: pg.Client, schema: string, steps: number) {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await PostgresStore.migrate({ connectionString: url, schema });
  const store = await PostgresStore.connect({
    connectionString: url,
    schema,
    applicationName: 'bench-profile',
  });
  const statements = new Map<string, number>();
  const original = pg.Client.prototype.query;
  // Every statement the store sends goes through a pooled pg.Client: count them by kind.
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const mine = (this as unknown as { connectionParameters?: { application_name?: string } })
      .connectionParameters?.application_name;
    if (mine !== 'bench-profile')
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    const text =
      typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string })?.text);
    const kind = statementKind(text);
    statements.set(kind, (statements.get(kind) ?? 0) + 1);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  let notifications = 0;
  listener.on('notification', () => {
    notifications += 1;
  });
  await listener.query('LISTEN llm_agent_runs');
  const lsn = async () =>
    String((await admin.query('SELECT pg_current_wal_lsn() AS l')).rows[0]?.l);
  const sampler = new pg.Client({ connectionString: url });
  await sampler.connect();
  let lockSamples = 0;
  let samples = 0;
  let sampling = true;
  const sampled = (async () => {
    while (sampling) {
      const found = await sampler.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'bench-profile' AND wait_event_type = 'Lock'",
      );
      samples += 1;
      lockSamples += found.rows[0]?.n ?? 0;
    }
  })();
  const tool: ToolDefinition<{ value: number }> = {
    name: STEP_TOOL_NAME,
    description: 'Count one up.',
    inputSchema: z.object({ value: z.number() }),
    idempotency: 'idempotent',
    execute: async ({ value }) => stepToolOutput(value),
  };
  const walBefore = await lsn();
  statements.clear();
  const writer = await store.create('profiled', {
    agentId: 'main',
    agentType: 'bench',
    label: 'bench',
    model: 'mock',
  });
  const result = await new Loop({
    backends: [countingModel(steps)],
    writer: writer,
    tools: [tool as ToolDefinition<never>],
    maxTurns: steps + 5,
  }).start(OPENING_TEXT);
  await writer.close();
  pg.Client.prototype.query = original;
  const counted = Object.fromEntries(statements);
  const walBytes = Number(
    (await admin.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS b', [walBefore]))
      .rows[0]?.b,
  );
  const writes = [...statements].filter(([kind]) => !kind.startsWith('SELECT') && kind !== 'BEGIN');
  const committed = writes.reduce((sum, [kind, n]) => sum + (kind === 'create' ? 0 : n), 0);
  sampling = false;
  await sampled;
  await sampler.end();
  await new Promise((done) => setTimeout(done, 100));
  await listener.end();
  await store.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  if (result.status !== 'finished') throw new Error(`the profiled run ended ${result.status}`);
  const total = [...statements.values()].reduce((sum, n) => sum + n, 0);
  return {
    steps,
    statementsPerStep: total / steps,
    statementsByKind: counted,
    commitsPerStep: committed / steps,
    walBytesPerStep: walBytes / steps,
    notifications,
    lockWaitSamples: lockSamples,
    activitySamples: samples,
  };
}

function statementKind(text: string): string {
  const squashed = text.replace(/\s+/g, ' ').trim();
  if (squashed.startsWith('WITH fence AS')) return 'append (fenced)';
  if (squashed.startsWith('SELECT 1 FROM') && squashed.includes('epoch = $2')) return 'fence check';
  if (squashed.startsWith('UPDATE') && squashed.includes('SET owner = NULL')) return 'release';
  if (squashed.startsWith('UPDATE') && squashed.includes('SET lease_expires')) return 'heartbeat';
  if (squashed.startsWith('INSERT INTO') && squashed.includes('runs (run_id')) return 'create';
  return squashed.split(' ').slice(0, 2).join(' ');
}
