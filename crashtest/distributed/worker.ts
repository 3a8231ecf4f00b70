import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Worker } from '../../src/fleet/worker.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { distributedAgents } from './agents.ts';

/*
 * One worker process of the distributed crashtest: serves the store with policy auto until it
 * is killed. Its `effect` tool records each execution in the ledger table on a connection of
 * its own (committed before the tool goes on), then pauses 100–400 ms. It prints one line per
 * event the driver counts: `fenced <run>` when a write of its was refused because another
 * worker took the run over.
 *
 * With `reconcile`, `effect` records its call's idempotency key too and has a reconcile that
 * looks the key up in the ledger.
 *
 *   node worker.ts <url> <schema> <leaseMs> <concurrency> <maxRevivals> [reconcile]
 */
const [url, schema, lease, concurrency, cap, reconcile] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
// CRASHTEST_TRACE=DIR keeps every worker's log, one file per process, to follow a breach.
const trace =
  process.env.CRASHTEST_TRACE === undefined
    ? undefined
    : join(process.env.CRASHTEST_TRACE, `worker-${process.pid}.log`);
const ledger = new pg.Client({ connectionString: url, application_name: 'crashtest ledger' });
await ledger.connect();
const store = await PostgresStore.connect({
  connectionString: url,
  schema,
  leaseMs: Number(lease),
  maxConnections: Number(concurrency) + 2,
  // The chaos cuts only this crashtest's connections, never another's on the same server.
  applicationName: `llm-agent crashtest ${schema}`,
});
const agents = distributedAgents(
  async (run, callId, key) => {
    await ledger.query(`INSERT INTO "${schema}".ledger (run, call_id, key) VALUES ($1, $2, $3)`, [
      run,
      callId,
      key,
    ]);
  },
  () => new Promise((done) => setTimeout(done, 100 + Math.random() * 300)),
  reconcile === 'reconcile'
    ? async (key) => {
        // One statement: the lookup and the snapshot it read are logged together, so the
        // check can tell a zombie's later execution from a wrong answer.
        const found = await ledger.query<{ found: boolean }>(
          `INSERT INTO "${schema}".reconcile_log (key, found, snapshot)
           SELECT $1, count(*) > 0, pg_current_snapshot() FROM "${schema}".ledger WHERE key = $1
           RETURNING found`,
          [key],
        );
        return found.rows[0]?.found === true;
      }
    : undefined,
);
process.stdout.write(`ready ${store.owner}\n`);
await new Worker({
  store,
  agents,
  resolveModel: () => {
    throw new Error('no model specs here');
  },
  policy: 'auto',
  maxRevivals: Number(cap),
  concurrency: Number(concurrency),
  joinPollMs: 500,
  log: (line) => {
    if (trace !== undefined) appendFileSync(trace, `${new Date().toISOString()} ${line}\n`);
    if (/: (taken|revived \(revival)/.test(line)) process.stdout.write('took\n');
    if (/: fenced — another worker took it over/.test(line)) {
      process.stdout.write(`fenced ${JSON.stringify(line.slice(0, 300))}\n`);
    }
  },
}).serve(50);
