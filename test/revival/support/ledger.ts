import { z } from 'zod';
import type { ToolDefinition } from '../../../src/loop/types.ts';
import type { SessionMeta } from '../../../src/transcript/session.ts';

/** The run the ledger tests start. */
export const LEDGER_RUN: SessionMeta = {
  agentId: 'main',
  agentType: 'cashier',
  label: 'charge orders',
  model: 'scripted:cashier',
};

/** What `charge` takes: an amount, and (for the test) whether it reaches the ledger at all. */
export type ChargeInput = { cents: number; charge: boolean };

/** What `charge` answers, and so what a reconcile that finds the charge answers. */
export function chargedText(cents: number, key: string): string {
  return `Charged ${cents} cents under ${key}.`;
}

/**
 * A `charge` tool against a ledger (the outside world): `execute` records the charge under the
 * call's idempotency key; `reconcile` looks the key up — found: completed, with the output the
 * call produced; not found: it did not happen.
 */
export function chargeTool(world: {
  execute: (input: ChargeInput, key: string) => Promise<unknown>;
  lookup: (key: string) => Promise<{ cents: number } | undefined>;
}): ToolDefinition<ChargeInput> {
  return {
    name: 'charge',
    description: 'Charges an order',
    inputSchema: z.object({ cents: z.number().int(), charge: z.boolean() }),
    idempotency: 'side-effect',
    async execute(input, { idempotencyKey }) {
      await world.execute(input, idempotencyKey);
      return chargedText(input.cents, idempotencyKey);
    },
    async reconcile(_input, { idempotencyKey }) {
      const found = await world.lookup(idempotencyKey);
      return found === undefined
        ? { outcome: 'did-not-happen' }
        : { outcome: 'completed', output: chargedText(found.cents, idempotencyKey) };
    },
  };
}
