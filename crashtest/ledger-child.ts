import { join } from 'node:path';
import { Loop } from '../src/loop/loop.ts';
import type { ToolDefinition } from '../src/loop/types.ts';
import { ScriptedModel } from '../src/testing/index.ts';
import { Session } from '../src/transcript/session.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { ledgerChargeTool, ledgerScript } from './ledger-tool.ts';

/*
 * The process the ledger kills: it loads everything, says `ready`, and on `go` runs the ledger
 * run (three turns of four `charge` calls, durability fsync) in the folder given, its charges in
 * `ledger.log` beside `main.jsonl`. It says `charged` after each charge is in the ledger (the
 * tool is then still running) and `done` when the run has finished, then waits to be killed.
 */

process.on('message', async (message: { type: string; folder?: string; seed?: number }) => {
  if (message.type !== 'go' || message.folder === undefined) return;
  const random = seededRandom(message.seed ?? 1);
  const session = await Session.create(
    join(message.folder, 'main.jsonl'),
    { agentId: 'main', agentType: 'cashier', label: 'charge orders', model: 'scripted:ledger' },
    { durability: 'fsync' },
  );
  const charge = ledgerChargeTool({
    ledgerPath: join(message.folder, 'ledger.log'),
    pauseMs: () => Math.floor(random() * 8),
    onCharged: (entry) => process.send?.({ charged: entry.key }),
  });
  const model = new ScriptedModel(ledgerScript());
  const result = await new Loop({
    backends: [model.model],
    writer: session,
    tools: [charge as ToolDefinition<unknown>],
  }).start('Charge every open order.');
  process.send?.({ done: true, status: result.status });
});
process.send?.({ ready: true });
