import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { Session } from '../../src/transcript/session.ts';
import { sessionMeta, steppingClock } from './transcripts.ts';

/*
 * Made test/fixtures/v2/ once, by running the real Loop and the real revival (never by writing
 * records by hand), and is kept as a record of how:
 *
 *   node test/support/generate-v2-fixtures.ts <folder>
 *
 * in-flight.jsonl: a run whose process died while three side-effecting `charge` calls ran, each
 * dispatch durable with its idempotency key (format 2), small checkpoints so one holds open
 * dispatches with keys. reconciled.jsonl: a copy of it revived after the tool's reconcile
 * answered completed (call-a), did not happen (call-b) and threw (call-c, so unknown), then
 * closed cleanly. It refuses to write over existing fixtures.
 */

const target = process.argv[2];
if (target === undefined) throw new Error('usage: generate-v2-fixtures.ts <folder>');
mkdirSync(target, { recursive: true });
const inFlight = join(target, 'in-flight.jsonl');
const reconciled = join(target, 'reconciled.jsonl');
if (existsSync(inFlight) || existsSync(reconciled)) {
  throw new Error(`${target} has fixtures: fixtures are never rewritten`);
}

const session = await Session.create(inFlight, sessionMeta('main'), {
  clock: steppingClock(Date.UTC(2026, 11, 5, 9)),
  checkpointBytes: 512,
});
const model = new ScriptedModel([
  { text: 'Looking at the orders.', calls: [{ id: 'look-1', name: 'orders', input: {} }] },
  {
    text: 'Charging the three orders.',
    calls: [
      { id: 'call-a', name: 'charge', input: { order: 'A', cents: 1200 } },
      { id: 'call-b', name: 'charge', input: { order: 'B', cents: 3400 } },
      { id: 'call-c', name: 'charge', input: { order: 'C', cents: 560 } },
    ],
  },
]);
const charged = new Map<string, string>();
let started = 0;
const charge: ToolDefinition<{ order: string; cents: number }> = {
  name: 'charge',
  description: 'Charges an order at the payment provider',
  inputSchema: z.object({ order: z.string(), cents: z.number().int() }),
  idempotency: 'side-effect',
  async execute(input, { idempotencyKey }) {
    if (input.order === 'A') charged.set(idempotencyKey, `ch_${input.order}`);
    started += 1;
    // Every dispatch is durable before its tool starts: the process "dies" here, all three in
    // their tool, as a crash would leave it.
    if (started === 3) await dieAndRevive();
    return new Promise<never>(() => undefined);
  },
  async reconcile(input, { idempotencyKey }) {
    if (input.order === 'C') throw new Error('the provider did not answer');
    const charge = charged.get(idempotencyKey);
    return charge === undefined
      ? { outcome: 'did-not-happen' }
      : { outcome: 'completed', output: { chargeId: charge, cents: input.cents } };
  },
};

async function dieAndRevive(): Promise<never> {
  await session.barrier();
  copyFileSync(inFlight, reconciled);
  const answers = await Revival.reconcile({
    path: reconciled,
    tools: [charge as ToolDefinition<unknown>],
  });
  const revived = await Revival.revive({
    path: reconciled,
    agentId: 'main',
    maxRevivals: 3,
    reconciled: answers,
    clock: steppingClock(Date.UTC(2026, 11, 5, 10)),
  });
  if (!revived.ok) throw new Error(`not revived: ${revived.detail}`);
  await revived.session.close();
  process.exit(0);
}

await new Loop({
  backends: [model.model],
  writer: session,
  tools: [
    {
      name: 'orders',
      description: 'Lists the open orders',
      inputSchema: z.object({}),
      idempotency: 'read-only',
      execute: async () => [{ order: 'A' }, { order: 'B' }, { order: 'C' }],
    },
    charge as ToolDefinition<unknown>,
  ],
}).start('Charge every open order.');
throw new Error('the run ended instead of dying in charge');
