/**
 * `llm-agent-revival/dbos`: an AI SDK agent run inside a DBOS Transact workflow with our rule —
 * a tool call that was running when its process died is answered, never run again — and its
 * conversation written as our transcript, so `status`, `show` and `ui` see DBOS runs.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { DBOS } from '@dbos-inc/dbos-sdk';
 * import { generateText } from 'ai';
 * import { DbosRun, dbosModel, dbosTools } from 'llm-agent-revival/dbos';
 * import { PostgresStore } from 'llm-agent-revival/store';
 * const store = await PostgresStore.connect({ connectionString: 'postgres://127.0.0.1/app' });
 * const model = dbosModel(openai('gpt-5-mini'));
 * const tools = dbosTools({});
 * export const agentWorkflow = DBOS.registerWorkflow(async (prompt: string) => {
 *   const opened = await DbosRun.open({ store, tools });
 *   if (!opened.ok) throw new Error(opened.detail);
 *   try {
 *     return (await opened.run.within(() => generateText({ model, tools, prompt }))).text;
 *   } finally {
 *     await opened.run.close();
 *   }
 * }, { name: 'agentWorkflow' });
 *
 * @module
 */
export { DbosRun, type DbosRunNotOpened, type DbosRunOptions } from './dbos-run.ts';
export { dbosModel } from './dbos-model.ts';
export { type DbosReconcile, type DbosToolsOptions, dbosTools } from './dbos-tools.ts';
