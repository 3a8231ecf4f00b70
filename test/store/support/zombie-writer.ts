import { createInterface } from 'node:readline';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { TranscriptError } from '../../../src/transcript/transcript-error.ts';

/*
 * A worker for the zombie test: it creates the run `main` with a short lease, says `ready`,
 * and on `write` tries to append and commit one record — after its parent has stopped it past
 * its lease and let another writer take the run over — then says how that went.
 *
 *   node zombie-writer.ts <url> <schema> <leaseMs>
 */
const [url, schema, lease] = process.argv.slice(2) as [string, string, string];
const store = await PostgresStore.connect({
  connectionString: url,
  schema,
  leaseMs: Number(lease),
});
const writer = await store.create('main', {
  agentId: 'main',
  agentType: 'main',
  label: 'main',
  model: 'test:model',
});
await writer.appendDurable({
  type: 'message',
  role: 'user',
  content: [{ type: 'text', text: 'before' }],
});
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'write') continue;
  process.stdout.write(`attempt poisoned-before=${writer.poisoned}\n`);
  let outcome = 'written';
  try {
    await writer.append({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'from the zombie' }],
    });
    await writer.barrier();
  } catch (error) {
    outcome = TranscriptError.isInstance(error) ? error.code : `error ${String(error)}`;
  }
  process.stdout.write(`outcome ${outcome}\n`);
  await writer.close();
  await store.close();
  break;
}
