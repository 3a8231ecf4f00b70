import { appendFileSync, closeSync, fsyncSync, openSync } from 'node:fs';
import pg from 'pg';
import { Loop } from '../../../src/loop/loop.ts';
import type { ToolDefinition } from '../../../src/loop/types.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { ScriptedModel } from '../../../src/testing/index.ts';
import { Session } from '../../../src/transcript/session.ts';
import type { TranscriptWriter } from '../../../src/transcript/transcript-writer.ts';
import { type ChargeInput, chargeTool, LEDGER_RUN } from './ledger.ts';

/*
 * A process that runs one turn of two `charge` calls and is killed by the test mid-tool:
 * `call-a` records its charge in the ledger (the world: a file synced, or a table committed on a
 * connection of its own) under its idempotency key and then hangs; `call-b` hangs before it
 * charges. It says `in-tool <callId>` as each gets there.
 *
 *   node ledger-worker.ts file <transcript> <ledger file>
 *   node ledger-worker.ts pg <url> <schema> <leaseMs>
 */
// The hanging tools hold nothing open: this keeps the process alive until the test kills it.
setInterval(() => undefined, 60_000);
const [kind, ...rest] = process.argv.slice(2) as [string, ...string[]];
let writer: TranscriptWriter;
let record: (line: { key: string; cents: number }) => Promise<void>;
if (kind === 'file') {
  const [transcript, ledgerPath] = rest as [string, string];
  writer = await Session.create(transcript, LEDGER_RUN, { durability: 'fsync' });
  record = async (line) => {
    appendFileSync(ledgerPath, `${JSON.stringify(line)}\n`);
    const fd = openSync(ledgerPath, 'r');
    fsyncSync(fd);
    closeSync(fd);
  };
} else {
  const [url, schema, lease] = rest as [string, string, string];
  const ledger = new pg.Client({ connectionString: url });
  await ledger.connect();
  const store = await PostgresStore.connect({
    connectionString: url,
    schema,
    leaseMs: Number(lease),
  });
  writer = await store.create('main', LEDGER_RUN);
  record = async (line) => {
    await ledger.query(`INSERT INTO "${schema}".ledger (key, cents) VALUES ($1, $2)`, [
      line.key,
      line.cents,
    ]);
  };
}
const model = new ScriptedModel([
  {
    calls: [
      { id: 'call-a', name: 'charge', input: { cents: 1200, charge: true } },
      { id: 'call-b', name: 'charge', input: { cents: 3400, charge: false } },
    ],
  },
]);
const charge = chargeTool({
  async execute(input, key) {
    if (input.charge) await record({ key, cents: input.cents });
    return 'hang';
  },
  async lookup() {
    return undefined;
  },
});
const hanging: ToolDefinition<ChargeInput> = {
  ...charge,
  execute: async (input, context) => {
    await charge.execute(input, context);
    process.stdout.write(`in-tool ${context.callId}\n`);
    return new Promise(() => undefined);
  },
};
await new Loop({
  backends: [model.model],
  writer: writer,
  tools: [hanging as ToolDefinition<unknown>],
}).start('Charge the two orders.');
