import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { Composer } from '../../../src/subagents/composer.ts';
import { crashTreeRegistry, MAIN_TASK } from './crash-tree.ts';

/*
 * Runs the crash tree as runs of a PostgreSQL store (a Composer over the store, one process) and,
 * with `kill`, SIGKILLs itself right after the second side effect is synced to the log — inside
 * a worker's tool call, its result never written, both children made, the parent waiting. Its leases are
 * short (`LEASE_MS`), so another process can take the runs over soon after.
 *
 * Usage: node store-tree-runner.ts URL SCHEMA LOG [kill]
 */

const LEASE_MS = 400;

const [url, schema, log, kill] = process.argv.slice(2);
if (url === undefined || schema === undefined || log === undefined)
  throw new Error('usage: store-tree-runner.ts URL SCHEMA LOG [kill]');
const store = await PostgresStore.connect({ connectionString: url, schema, leaseMs: LEASE_MS });
let effects = 0;
const composer = new Composer({
  registry: crashTreeRegistry(log, false, () => {
    effects += 1;
    if (kill === 'kill' && effects === 2) process.kill(process.pid, 'SIGKILL');
  }),
  store,
  limits: { maxConcurrent: 8, maxDepth: 2 },
  loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
});
const { run } = await composer.start({ run: 'main', agentType: 'main', task: MAIN_TASK });
const result = await run;
await composer.idle();
await store.close();
process.stdout.write(`${JSON.stringify({ status: result.status, text: result.text })}\n`);
