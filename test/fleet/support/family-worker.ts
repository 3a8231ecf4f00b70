import pg from 'pg';
import { Worker } from '../../../src/fleet/worker.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { familyAgents } from './family-agents.ts';

/*
 * A worker process carrying one run at a time over the PostgreSQL store, to be killed: the
 * fetcher's `fetch` records itself in the ledger table on a connection of its own (committed),
 * says `in-tool` and never returns. It says `took <run>` for each run it takes.
 *
 *   node family-worker.ts <url> <schema> <leaseMs>
 */
const [url, schema, lease] = process.argv.slice(2) as [string, string, string];
const ledger = new pg.Client({ connectionString: url });
await ledger.connect();
const store = await PostgresStore.connect({
  connectionString: url,
  schema,
  leaseMs: Number(lease),
});
await new Worker({
  store,
  agents: familyAgents(async () => {
    await ledger.query(`INSERT INTO "${schema}".ledger (what) VALUES ('fetch')`);
    process.stdout.write('in-tool\n');
    return new Promise(() => undefined);
  }),
  resolveModel: () => {
    throw new Error('no model specs here');
  },
  policy: 'auto',
  maxRevivals: 2,
  concurrency: 1,
  joinPollMs: 200,
  log: (line) => {
    const taken = /^(.*): taken$/.exec(line);
    if (taken !== null) process.stdout.write(`took ${taken[1]}\n`);
  },
}).serve(50);
