import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import { Session } from '../../src/transcript/session.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { sessionMeta, steppingClock } from './transcripts.ts';

/*
 * Made the frozen fixture test/fixtures/v1/compacted.jsonl once, by running the real Loop
 * (never by writing records by hand), and is kept as a record of how:
 *
 *   node test/support/generate-compacted-fixture.ts <folder>
 *
 * A run whose conversation passes its token budget twice (two compactions, each from the first
 * user turn to a finished turn), with small checkpoints, so that its last checkpoint carries
 * `compacted` (format 0.3); its process then dies while a side-effecting `send_report` call
 * runs, after the dispatch is durable. It refuses to write over a file.
 */

const target = process.argv[2];
if (target === undefined) throw new Error('usage: generate-compacted-fixture.ts <folder>');
mkdirSync(target, { recursive: true });
const path = join(target, 'compacted.jsonl');
if (existsSync(path)) throw new Error(`${path} exists: fixtures are never rewritten`);

const session = await Session.create(path, sessionMeta('main'), {
  clock: steppingClock(Date.UTC(2026, 2, 1, 9)),
  checkpointBytes: 1024,
});
const steps = Array.from({ length: 8 }, (_, index) => ({
  text: `Reading part ${index + 1}.`,
  calls: [{ id: `read-${index + 1}`, name: 'read_part', input: { part: index + 1 } }],
}));
const model = new ScriptedModel([
  ...steps,
  { text: 'Sending the report.', calls: [{ id: 'send-1', name: 'send_report', input: {} }] },
]);
const loop = new Loop({
  backends: [model.model],
  writer: session,
  compaction: { maxTokens: 600, keepRecent: 2 },
  tools: [
    {
      name: 'read_part',
      description: 'Reads one part of the manual',
      inputSchema: z.object({ part: z.number() }),
      idempotency: 'read-only',
      execute: async ({ part }) => `Part ${part}: ${'lorem ipsum '.repeat(40)}`,
    },
    {
      name: 'send_report',
      description: 'Sends the report',
      inputSchema: z.object({}),
      idempotency: 'side-effect',
      execute: async () => {
        // The dispatch is durable before a tool starts: the process dies here, as a crash would.
        if (model.summaryPrompts.length < 2) {
          console.error(`only ${model.summaryPrompts.length} compactions: not the fixture meant`);
          process.exit(1);
        }
        process.exit(0);
      },
    },
  ],
});
await loop.start('Read the manual part by part, then send a report.');
throw new Error('the run ended instead of dying in send_report');
