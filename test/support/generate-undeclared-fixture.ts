import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';
import {
  RevivableRun,
  revivableModel,
  revivableTools,
} from '../../src/integrations/ai-sdk/index.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { steppingClock } from './transcripts.ts';

/*
 * Made the frozen fixture test/fixtures/v1/undeclared.jsonl once, by running a real AI SDK
 * ToolLoopAgent through the wrappers (never by writing records by hand), and is kept as a
 * record of how:
 *
 *   node test/support/generate-undeclared-fixture.ts <folder>
 *
 * The agent looks a customer up (`lookup`, declared read-only), then sends a report
 * (`send_report`, whose idempotency no one declared); the process SIGKILLs itself inside
 * `send_report`, after its dispatch is durable. So the file ends with an open dispatch recorded
 * `side-effect` with `idempotencyDeclared: false`. It refuses to write over a file.
 */

const target = process.argv[2];
if (target === undefined) throw new Error('usage: generate-undeclared-fixture.ts <folder>');
mkdirSync(target, { recursive: true });
const path = join(target, 'undeclared.jsonl');
if (existsSync(path)) throw new Error(`${path} exists: fixtures are never rewritten`);

const scripted = new ScriptedModel([
  { text: 'Looking ann up.', calls: [{ id: 'lookup-1', name: 'lookup', input: { name: 'ann' } }] },
  {
    text: 'Sending.',
    calls: [{ id: 'send-1', name: 'send_report', input: { to: 'ann@example.com' } }],
  },
]);
const agent = new ToolLoopAgent({
  model: revivableModel(scripted.model),
  instructions: 'You send reports.',
  tools: revivableTools(
    {
      lookup: tool({
        description: 'Look a customer up',
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }) => ({ name, email: `${name}@example.com` }),
      }),
      send_report: tool({
        description: 'Send the report by email',
        inputSchema: z.object({ to: z.string() }),
        execute: async () => {
          process.kill(process.pid, 'SIGKILL');
          return await new Promise<string>(() => undefined);
        },
      }),
    },
    { idempotency: { lookup: 'read-only' } },
  ),
});
const opened = await RevivableRun.open({
  path,
  sessionOptions: { clock: steppingClock(Date.UTC(2026, 2, 1, 9)) },
});
if (!opened.ok) throw new Error(opened.detail);
await opened.run.within(() => agent.generate({ prompt: 'Email ann her report.' }));
