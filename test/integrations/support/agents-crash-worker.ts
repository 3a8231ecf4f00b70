/**
 * One process of an OpenAI Agents JS program: `node agents-crash-worker.ts PATH` runs the
 * mailer Agent over a TranscriptSession at PATH (opening it revives it when its process died)
 * and prints the final output. CRASH_PHASE=first makes the tool kill the process.
 */
import { run } from '@openai/agents';
import { TranscriptSession } from '../../../src/integrations/openai-agents/index.ts';
import { mailerAgent } from './agents-crash-program.ts';
import { PROMPT, phaseOf } from './crash-program.ts';

const [path] = process.argv.slice(2) as [string];
const agent = mailerAgent(path, phaseOf(process.env));

const opened = await TranscriptSession.open({ path });
if (!opened.ok) throw new Error(opened.detail);
const { session } = opened;
const result = await session.within(() => run(agent, session.revived ? [] : PROMPT, { session }));
await session.close();
console.log(result.finalOutput);
