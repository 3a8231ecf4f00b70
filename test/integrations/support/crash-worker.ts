/**
 * One process of an AI SDK program: `node crash-worker.ts PROGRAM PATH` runs the program on the
 * transcript at PATH (opening it revives it when its process died) and prints the final text.
 * PROGRAM: `agent` (ToolLoopAgent.generate), `stream-text` (streamText), `loop` (our Loop with
 * tool()). CRASH_PHASE=first makes the tool kill the process.
 */
import { RevivableRun } from '../../../src/integrations/ai-sdk/index.ts';
import { Loop } from '../../../src/loop/loop.ts';
import { Session } from '../../../src/transcript/session.ts';
import {
  PROMPT,
  phaseOf,
  programAgent,
  programStream,
  scriptedModel,
  sendTool,
} from './crash-program.ts';

const [program, path] = process.argv.slice(2) as [string, string];
const phase = phaseOf(process.env);
const model = scriptedModel(phase, `${path}.prompts`);
const effects = `${path}.effects`;

if (program === 'loop') {
  const session = await Session.create(path, {
    agentId: 'main',
    agentType: 'main',
    label: 'main',
    model: 'scripted',
  });
  const result = await new Loop({
    backends: [model],
    writer: session,
    tools: { send: sendTool(effects, phase) },
  }).start(PROMPT);
  await session.close();
  console.log(result.text);
} else {
  const opened = await RevivableRun.open({ path });
  if (!opened.ok) throw new Error(opened.detail);
  const { run } = opened;
  const input = run.messages.length === 0 ? { prompt: PROMPT } : { messages: run.messages };
  let text: string;
  if (program === 'agent') {
    const agent = programAgent(model, effects, phase);
    text = (await run.within(() => agent.generate(input))).text;
  } else {
    const result = run.within(() => programStream(model, effects, phase)(input));
    text = await result.text;
  }
  await run.close();
  console.log(text);
}
