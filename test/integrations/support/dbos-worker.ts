/**
 * One DBOS worker process for the DBOS crash tests: `node dbos-worker.ts` with its settings in
 * the environment. It launches DBOS (which recovers this executor's pending workflows), then in
 * phase `start` starts the agent workflow, in phase `recover` waits for the recovered one; it
 * prints the workflow's result. MODE `plain` is DBOS's documented pattern (each model call and
 * each tool call a `DBOS.runStep`); `wrapped` is ours (DbosRun, dbosModel, dbosTools).
 *
 * DBOS_URL: the database (DBOS's system tables and our store's schema); STORE_SCHEMA; WORKFLOW:
 * the workflow id; EXECUTOR: the executor id; DIR: where the effects and prompts ledgers go;
 * KILL=1: the tool SIGKILLs its process once it has started; HOLD=FILE: the tool waits until
 * FILE exists; RECONCILE=1: the tool has a reconcile that finds the call completed.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { toolIdempotencyKey } from '../../../src/integrations/ai-sdk/index.ts';
import { DbosRun, dbosModel, dbosTools } from '../../../src/integrations/dbos/index.ts';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';

const env = process.env as Record<string, string>;
const dir = env.DIR as string;
const effects = join(dir, 'effects.log');
const prompts = join(dir, 'prompts.jsonl');
export const PROMPT = 'Send ann the report.';
export const RECONCILED_OUTPUT = 'sent to ann (message id m-1, found by reconcile)';

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** Calls `send` until a tool result is in the prompt, then answers; logs every prompt's tool results. */
const scripted = new MockLanguageModelV4({
  doGenerate: async (
    options: LanguageModelV4CallOptions,
  ): Promise<LanguageModelV4GenerateResult> => {
    const results = options.prompt.filter((message) => message.role === 'tool');
    appendFileSync(prompts, `${JSON.stringify({ pid: process.pid, results })}\n`);
    return {
      content:
        results.length === 0
          ? [
              {
                type: 'tool-call',
                toolCallId: 'call_send_1',
                toolName: 'send',
                input: '{"to":"ann"}',
              },
            ]
          : [{ type: 'text', text: 'Done.' }],
      finishReason: { unified: results.length === 0 ? 'tool-calls' : 'stop', raw: undefined },
      usage: USAGE,
      warnings: [],
    };
  },
});

async function send({ to }: { to: string }, options?: { toolCallId: string }): Promise<string> {
  // The wrapped tool logs the key it was handed; the reconcile looks for it there.
  const key = options === undefined ? '' : ` ${toolIdempotencyKey(options)}`;
  appendFileSync(effects, `start send ${process.pid}${key}\n`);
  if (env.KILL === '1') {
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => undefined);
  }
  while (env.HOLD !== undefined && !existsSync(env.HOLD)) {
    await new Promise((done) => setTimeout(done, 50));
  }
  appendFileSync(effects, `end send ${process.pid}\n`);
  return `sent to ${to}`;
}

const sendSchema = z.object({ to: z.string() });

async function plainWorkflow(prompt: string): Promise<string> {
  console.error(JSON.stringify({ executing: process.pid }));
  // DBOS's pattern: each model call a step (as its AI SDK middleware), each tool call a step.
  const model = wrapLanguageModel({
    model: scripted,
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: ({ doGenerate }) =>
        DBOS.runStep(
          async () => {
            const { content, finishReason, usage, warnings } = await doGenerate();
            return { content, finishReason, usage, warnings };
          },
          { name: 'model' },
        ),
    },
  });
  const tools = {
    send: tool({
      inputSchema: sendSchema,
      execute: (input) => DBOS.runStep(() => send(input), { name: 'send' }),
    }),
  };
  const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(5) });
  return result.text;
}

const store = await PostgresStore.connect({
  connectionString: env.DBOS_URL as string,
  schema: env.STORE_SCHEMA as string,
  leaseMs: 1500,
});
const model = dbosModel(scripted);
const tools = dbosTools(
  { send: tool({ inputSchema: sendSchema, execute: send }) },
  env.RECONCILE === '1'
    ? {
        reconcile: {
          // Completed only when the tool was started with the very key the reconcile is asked by.
          send: async (_input, { idempotencyKey }) =>
            readFileSync(effects, 'utf8').includes(` ${idempotencyKey}\n`)
              ? { outcome: 'completed', output: RECONCILED_OUTPUT }
              : { outcome: 'unknown', detail: `no start with key ${idempotencyKey}` },
        },
      }
    : {},
);

async function wrappedWorkflow(prompt: string): Promise<string> {
  console.error(JSON.stringify({ executing: process.pid }));
  const opened = await DbosRun.open({ store, tools, agentType: 'mailer', pollMs: 100 });
  if (!opened.ok) throw new Error(`${opened.reason}: ${opened.detail}`);
  const { run } = opened;
  console.error(JSON.stringify({ opened: process.pid, revived: run.revived }));
  try {
    const result = await run.within(() =>
      generateText({ model, tools, prompt, stopWhen: stepCountIs(5) }),
    );
    return result.text;
  } finally {
    await run.close();
  }
}

const workflow = DBOS.registerWorkflow(env.MODE === 'plain' ? plainWorkflow : wrappedWorkflow, {
  name: 'agentWorkflow',
});
DBOS.setConfig({
  name: 'llm-agent-dbos-test',
  systemDatabaseUrl: env.DBOS_URL as string,
  executorID: env.EXECUTOR as string,
  logLevel: 'error',
});
await DBOS.launch();
try {
  let output: unknown;
  if (env.PHASE === 'start') {
    const handle = await DBOS.startWorkflow(workflow, { workflowID: env.WORKFLOW as string })(
      PROMPT,
    );
    output = await handle.getResult();
  } else {
    output = await DBOS.retrieveWorkflow(env.WORKFLOW as string).getResult();
  }
  console.log(JSON.stringify({ output }));
} finally {
  // A recovered execution may still be running here (a second process waiting on the run).
  await DBOS.shutdown({ workflowCompletionTimeoutMS: 20_000 });
  await store.close();
}
