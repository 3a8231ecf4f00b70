import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { ToolDefinition } from '../src/loop/types.ts';
import type { ScriptStep } from '../src/testing/scripted-model.ts';

/*
 * The ledger-backed tool of the crashtest: `charge` charges an order at a "payment provider"
 * whose only memory is a ledger file outside the transcript — one line per charge, under the
 * call's idempotency key, synced before the tool goes on. The ledger is what really happened.
 * Each call's input names how its tool's reconcile behaves: `honest` looks the key up in the
 * ledger; `lying` answers something that is not an answer; `throwing` throws; `hanging` never
 * answers. Only an honest reconcile may settle a call; the others must fall back to the
 * interrupted text.
 */

/** How a call's reconcile behaves. */
export type ReconcileMode = 'honest' | 'lying' | 'throwing' | 'hanging';

/** What `charge` takes. */
export type ChargeInput = { order: string; cents: number; mode: ReconcileMode };

/** One line of the ledger: a charge that really happened. */
export interface LedgerEntry {
  key: string;
  order: string;
  cents: number;
}

/** The output of a charge: what `execute` returns, and what an honest reconcile recovers. */
export function chargeOutput(entry: LedgerEntry): { chargeId: string; cents: number } {
  return { chargeId: `ch_${entry.key.slice(3, 15)}`, cents: entry.cents };
}

/** Every charge in the ledger file (a line cut short by a kill is not a charge). */
export async function readLedger(path: string): Promise<LedgerEntry[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const entries: LedgerEntry[] = [];
  for (const line of text.split('\n')) {
    try {
      entries.push(JSON.parse(line) as LedgerEntry);
    } catch {
      // Empty, or torn by the kill: nothing was charged by it.
    }
  }
  return entries;
}

function appendSynced(path: string, line: string): void {
  const fd = openSync(path, 'a');
  try {
    writeSync(fd, line);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const inputSchema = z.object({
  order: z.string(),
  cents: z.number().int(),
  mode: z.enum(['honest', 'lying', 'throwing', 'hanging']),
});

/**
 * The `charge` tool against the ledger at `ledgerPath`. `execute` waits, charges (a synced
 * ledger line), tells `onCharged`, waits again and answers; `reconcile` answers by the call's
 * mode. `pauseMs` gives the kill room to land before and after the charge.
 */
export function ledgerChargeTool(options: {
  ledgerPath: string;
  pauseMs?: () => number;
  onCharged?: (entry: LedgerEntry) => void;
  /** Counts executions: a reviver's copy must never run. */
  onExecute?: (input: ChargeInput) => void;
}): ToolDefinition<ChargeInput> {
  const pause = options.pauseMs ?? (() => 0);
  return {
    name: 'charge',
    description: 'Charges an order at the payment provider, under the call’s idempotency key',
    inputSchema,
    idempotency: 'side-effect',
    async execute(input, { idempotencyKey }) {
      options.onExecute?.(input);
      await sleep(pause());
      const entry = { key: idempotencyKey, order: input.order, cents: input.cents };
      appendSynced(options.ledgerPath, `${JSON.stringify(entry)}\n`);
      options.onCharged?.(entry);
      await sleep(pause());
      return chargeOutput(entry);
    },
    async reconcile(input, { idempotencyKey }) {
      switch (input.mode) {
        case 'lying':
          // Claims completion with no output: not an answer.
          return { outcome: 'completed' } as never;
        case 'throwing':
          throw new Error('the provider is unreachable');
        case 'hanging':
          return new Promise<never>(() => undefined);
        default: {
          const found = (await readLedger(options.ledgerPath)).find(
            (entry) => entry.key === idempotencyKey,
          );
          return found === undefined
            ? { outcome: 'did-not-happen' }
            : { outcome: 'completed', output: chargeOutput(found) };
        }
      }
    },
  };
}

const MODES: ReconcileMode[] = ['lying', 'throwing', 'hanging'];

/**
 * The run the ledger kills: three turns of four charges each (two with an honest reconcile, one
 * lying, throwing or hanging, and a fourth honest), then a closing text.
 */
export function ledgerScript(): ScriptStep[] {
  const turns: ScriptStep[] = [];
  for (let turn = 0; turn < 3; turn += 1) {
    const modes: ReconcileMode[] = ['honest', 'honest', MODES[turn] as ReconcileMode, 'honest'];
    turns.push({
      text: `Charging batch ${turn + 1}.`,
      calls: modes.map((mode, index) => ({
        id: `charge-${turn + 1}-${index + 1}`,
        name: 'charge',
        input: { order: `o${turn + 1}${index + 1}`, cents: 100 * (turn + 1) + index, mode },
      })),
    });
  }
  turns.push({ text: 'Every order is charged.' });
  return turns;
}
