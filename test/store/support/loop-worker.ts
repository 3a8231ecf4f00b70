import pg from 'pg';
import { z } from 'zod';
import { Loop } from '../../../src/loop/loop.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { ScriptedModel } from '../../../src/testing/index.ts';

/*
 * A worker that runs `main` on the PostgreSQL store until its tool `deploy` starts: the tool
 * records its side effect in a ledger table on a connection of its own (committed), says
 * `in-tool`, and never returns — the test kills the worker there.
 *
 *   node loop-worker.ts <url> <schema> <leaseMs>
 */
const [url, schema, lease] = process.argv.slice(2) as [string, string, string];
const ledger = new pg.Client({ connectionString: url });
await ledger.connect();
const store = await PostgresStore.connect({
  connectionString: url,
  schema,
  leaseMs: Number(lease),
});
const writer = await store.create('main', {
  agentId: 'main',
  agentType: 'deployer',
  label: 'deploy',
  model: 'scripted:deployer',
});
const model = new ScriptedModel([
  { calls: [{ id: 'call-deploy', name: 'deploy', input: { to: 'prod' } }] },
]);
await new Loop({
  backends: [model.model],
  writer: writer,
  tools: [
    {
      name: 'deploy',
      description: 'Deploys',
      inputSchema: z.object({ to: z.string() }),
      idempotency: 'side-effect',
      execute: async ({ to }) => {
        await ledger.query(`INSERT INTO "${schema}".ledger (call_id, target) VALUES ($1, $2)`, [
          'call-deploy',
          to,
        ]);
        process.stdout.write('in-tool\n');
        return new Promise(() => undefined);
      },
    },
  ],
}).start('Deploy to prod.');
