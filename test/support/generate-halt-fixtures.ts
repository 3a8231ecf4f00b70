import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import { Session } from '../../src/transcript/session.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { sessionMeta, steppingClock } from './transcripts.ts';

/*
 * Made the frozen fixtures of runs that failed or were stopped in test/fixtures/v1/ once, by
 * running the real Loop (never by writing records by hand), and is kept as a record of how:
 *
 *   node test/support/generate-halt-fixtures.ts <folder>           failed.jsonl, stopped.jsonl
 *   node test/support/generate-halt-fixtures.ts <folder> --legacy  legacy-failed.jsonl
 *
 * `--legacy` was run at commit c59257a, the last version whose loop ended a failed run with an
 * assistant turn of its own (`The run failed: …`): that file is what such a version wrote.
 * Run today, the same scenario writes what failed.jsonl holds. It refuses to write over a file.
 */

const target = process.argv[2];
if (target === undefined) throw new Error('usage: generate-halt-fixtures.ts <folder> [--legacy]');
const legacy = process.argv.includes('--legacy');
mkdirSync(target, { recursive: true });

function fresh(name: string): string {
  const path = join(target as string, name);
  if (existsSync(path)) throw new Error(`${path} exists: fixtures are never rewritten`);
  return path;
}

/** A run whose first turn works and whose second meets an outage on both backends. */
async function failed(name: string): Promise<void> {
  const path = fresh(name);
  const session = await Session.create(path, sessionMeta('main'), {
    clock: steppingClock(Date.UTC(2026, 1, 1, 9)),
  });
  const primary = new ScriptedModel(
    [
      { calls: [{ id: 'call-1', name: 'lookup', input: { key: 'a' } }] },
      { fail: 'http', status: 503 },
      { fail: 'http', status: 503 },
    ],
    'primary',
  );
  const fallback = new ScriptedModel(
    [
      { fail: 'http', status: 429 },
      { fail: 'http', status: 500 },
    ],
    'fallback',
  );
  const loop = new Loop({
    backends: [primary.model, fallback.model],
    writer: session,
    backendRounds: 2,
    sleep: async () => undefined,
    tools: [
      {
        name: 'lookup',
        description: 'Looks a key up',
        inputSchema: z.object({ key: z.string() }),
        idempotency: 'read-only',
        execute: async ({ key }) => ({ value: key.toUpperCase() }),
      },
    ],
  });
  const result = await loop.start('Look up a.');
  await session.close();
  if (result.status !== 'failed') throw new Error(`expected a failed run, got ${result.status}`);
}

/** A run stopped while a side-effecting tool ran: the tool ignores the signal and throws. */
async function stopped(name: string): Promise<void> {
  const path = fresh(name);
  const session = await Session.create(path, sessionMeta('main'), {
    clock: steppingClock(Date.UTC(2026, 1, 2, 9)),
  });
  const model = new ScriptedModel([
    { calls: [{ id: 'call-1', name: 'deploy', input: { target: 'staging' } }] },
  ]);
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const loop = new Loop({
    backends: [model.model],
    writer: session,
    tools: [
      {
        name: 'deploy',
        description: 'Deploys',
        inputSchema: z.object({ target: z.string() }),
        idempotency: 'side-effect',
        execute: (_input, { signal }) =>
          new Promise((_resolve, reject) => {
            started();
            signal.addEventListener('abort', () => reject(new Error('deploy interrupted')));
          }),
      },
    ],
  });
  const run = loop.start('Deploy to staging.');
  await running;
  run.abort('SIGTERM: terminated');
  const result = await run;
  await session.close();
  if (result.status !== 'aborted') throw new Error(`expected an aborted run, got ${result.status}`);
}

if (legacy) await failed('legacy-failed.jsonl');
else {
  await failed('failed.jsonl');
  await stopped('stopped.jsonl');
}
