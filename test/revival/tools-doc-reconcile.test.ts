import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
} from '../../src/revival/texts.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { peek } from '../../src/transcript/peek.ts';
import { Session } from '../../src/transcript/session.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * The reconcile example of docs/tools.md §7, the page's own code, against a fake payment provider
 * that keeps idempotency keys (fetch replaced): a run stopped while three charges were in the
 * provider's hands — one charged, one that never landed, one still pending — is reconciled by
 * key into completed / did not happen / unknown, nothing is charged again, and a repeat of a
 * call with its key charges once at the provider.
 */

const REPO = new URL('../../', import.meta.url);

/** The `charge` tool of docs/tools.md, its imports pointed at this checkout. */
async function chargeOfTheDocs(folder: string): Promise<ToolDefinition<unknown>> {
  const page = await readFile(new URL('docs/tools.md', REPO), 'utf8');
  const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  const block = blocks.find((code) => code.includes('const charge: ToolDefinition'));
  assert.ok(block !== undefined, 'docs/tools.md has the charge example');
  const code = block
    .replace(
      "from 'llm-agent-revival'",
      `from ${JSON.stringify(new URL('src/index.ts', REPO).href)}`,
    )
    .replace("from 'zod'", `from ${JSON.stringify(import.meta.resolve('zod'))}`);
  const file = join(folder, 'charge.ts');
  await writeFile(file, code);
  const module = (await import(pathToFileURL(file).href)) as { charge: ToolDefinition<unknown> };
  return module.charge;
}

interface Charge {
  id: string;
  key: string;
  customer: string;
  amount: number;
  status: 'succeeded' | 'pending';
}

/** A provider that keeps keys: the same key twice charges once. */
function fakeProvider() {
  const charges: Charge[] = [];
  const posts: string[] = [];
  let landed = 0;
  const never = (signal: AbortSignal | null | undefined) =>
    new Promise<never>((_, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    assert.equal(url.origin + url.pathname, 'https://payments.example.com/v1/charges');
    if (init?.method === 'POST') {
      const key = new Headers(init.headers).get('idempotency-key') ?? '';
      posts.push(key);
      const { customer, amount } = JSON.parse(String(init.body)) as {
        customer: string;
        amount: number;
      };
      let charge = charges.find((c) => c.key === key);
      if (charge === undefined && customer !== 'bob') {
        // bob's request never reaches the provider; the others are taken, and then the
        // process stops before it hears back (ann's went through, cy's is still pending).
        landed += 1;
        charge = {
          id: `ch_${landed}`,
          key,
          customer,
          amount,
          status: customer === 'cy' ? 'pending' : 'succeeded',
        };
        charges.push(charge);
      }
      if (charge !== undefined && posts.filter((k) => k === key).length > 1) {
        return Response.json({ id: charge.id });
      }
      return never(init.signal);
    }
    const key = url.searchParams.get('idempotency_key');
    return Response.json({
      data: charges.filter((c) => c.key === key).map(({ id, status }) => ({ id, status })),
    });
  };
  return { fetch, charges, posts };
}

function answersOf(records: Awaited<ReturnType<typeof peek>>) {
  assert.ok(records.ok);
  const answers = new Map<string, unknown>();
  for (const record of records.records.filter(isKnownRecord)) {
    if (record.type !== 'message' || record.role !== 'tool') continue;
    for (const part of record.content) {
      if (part.type === 'tool-result') answers.set(part.callId, part.output);
    }
  }
  return answers;
}

test("docs/tools.md's reconcile, against a provider that keeps keys: the truth by key, nothing charged again", async (t) => {
  const folder = await makeTempFolder('llm-agent-docs-reconcile-');
  const provider = fakeProvider();
  t.mock.method(globalThis, 'fetch', provider.fetch);
  try {
    const charge = await chargeOfTheDocs(folder);
    const path = join(folder, 'main.jsonl');
    const session = await Session.create(path, {
      agentId: 'main',
      agentType: 'main',
      label: 'main',
      model: 'm',
    });
    const model = new ScriptedModel([
      {
        text: 'Charging.',
        calls: [
          { id: 'call-ann', name: 'charge', input: { customer: 'ann', cents: 1200 } },
          { id: 'call-bob', name: 'charge', input: { customer: 'bob', cents: 3400 } },
          { id: 'call-cy', name: 'charge', input: { customer: 'cy', cents: 560 } },
        ],
      },
    ]);
    const run = new Loop({ backends: [model.model], writer: session, tools: [charge] }).start(
      'Charge the three orders.',
    );
    const deadline = Date.now() + 10_000;
    while (provider.posts.length < 3 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 10));
    }
    // The fault: the run stops with the three charges in the provider's hands.
    assert.equal(provider.posts.length, 3, 'all three charges were sent');
    run.abort('stopped mid-charge');
    await run.result;
    await session.close();
    assert.deepEqual(provider.charges.map((c) => c.customer).sort(), ['ann', 'cy']);

    const before = await peek(path);
    assert.ok(before.ok);
    const keys = new Map<string, string | undefined>();
    for (const record of before.records.filter(isKnownRecord)) {
      if (record.type === 'tool-dispatched') keys.set(record.callId, record.idempotencyKey);
    }
    // The provider was given each call's recorded key.
    assert.deepEqual(provider.posts.slice().sort(), [...keys.values()].sort());

    const reconciled = await Revival.reconcile({ path, tools: [charge] });
    const byCall = new Map(reconciled.map((r) => [r.callId, r]));
    assert.deepEqual(
      { ...byCall.get('call-ann') },
      {
        callId: 'call-ann',
        toolName: 'charge',
        idempotencyKey: keys.get('call-ann'),
        answer: 'completed',
        output: 'Charged 1200 cents to ann: ch_1.',
        isError: false,
      },
    );
    assert.equal(byCall.get('call-bob')?.answer, 'did-not-happen');
    assert.equal(byCall.get('call-cy')?.answer, 'unknown');
    assert.equal(byCall.get('call-cy')?.detail, 'reconcile: still pending');
    assert.equal(provider.posts.length, 3, 'a reconcile only looks');

    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2, reconciled });
    assert.ok(revived.ok, JSON.stringify(revived));
    await revived.session.close();
    const answers = answersOf(await peek(path));
    assert.equal(answers.get('call-ann'), `${RECOVERED_NOTE}\n\nCharged 1200 cents to ann: ch_1.`);
    assert.equal(answers.get('call-bob'), DID_NOT_HAPPEN_MESSAGE);
    assert.equal(answers.get('call-cy'), INTERRUPTED_MESSAGE);
    assert.equal(provider.charges.length, 2, 'nothing was charged again');

    // The key makes a retry safe at the provider: ann's call repeated with its key charges once.
    const again = await charge.execute(
      { customer: 'ann', cents: 1200 },
      {
        callId: 'call-ann',
        idempotencyKey: keys.get('call-ann') as string,
        signal: new AbortController().signal,
        writer: revived.session,
        session: revived.session,
      },
    );
    assert.equal(again, 'Charged 1200 cents to ann: ch_1.');
    assert.equal(provider.charges.length, 2);
  } finally {
    await removeFolder(folder);
  }
});
