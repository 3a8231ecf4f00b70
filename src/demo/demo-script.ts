/**
 * What the demo's scripted model decides, as a pure function of the conversation. The lead
 * delegates two sections to writers one after the other (spawn, wait), then reads their files
 * and assembles a report; a writer writes its
 * section — and, told that a write was interrupted, reads the file before deciding whether to
 * write it again. Nothing here depends on time, randomness or the process it runs in.
 *
 * @module
 */
import type { JSONValue } from '@ai-sdk/provider';
import type { ScriptAnswer, ScriptPrompt, ScriptToolResult } from './prompt-model.ts';

/**
 * The marker in the lead's system prompt.
 *
 * @example
 * if (prompt.system.includes(LEAD_MARKER)) return leadScript(prompt);
 */
export const LEAD_MARKER = 'You are the lead of a small writing team.';
/**
 * The marker in a writer's system prompt.
 *
 * @example
 * if (prompt.system.includes(WRITER_MARKER)) return writerScript(prompt);
 */
export const WRITER_MARKER = 'You are a writer.';

/**
 * The two sections the lead delegates: file name, title.
 *
 * @example
 * for (const { file, title } of DEMO_SECTIONS) console.log(file, sectionContent(title).length);
 */
export const DEMO_SECTIONS: readonly { file: string; title: string }[] = [
  { file: 'section-1.md', title: 'Why runs die' },
  { file: 'section-2.md', title: 'Coming back honestly' },
];

/**
 * The report the lead assembles from the sections.
 *
 * @example
 * const report = await readFile(join(workspace, DEMO_REPORT), 'utf8');
 */
export const DEMO_REPORT = 'report.md';

const PARAGRAPHS: Record<string, string[]> = {
  'Why runs die': [
    'An agent run lives in a process, and processes die: an out-of-memory kill, a deploy, a',
    'laptop lid, a power cut. The run was in the middle of something — usually a tool call',
    'whose effect is now unknown. A transcript written in a careful order remembers exactly',
    'which calls were handed to a tool and never heard back from.',
  ],
  'Coming back honestly': [
    'A revived run is told the truth: the call was interrupted, it may or may not have taken',
    'effect, and it was NOT retried. Replaying it blindly could do the work twice; pretending',
    'it failed could hide a half-written file. So the model looks first — it reads the file it',
    'was writing — and only then decides whether the work still needs doing.',
  ],
};

/**
 * The exact content a writer writes for a section: a pure function of its title.
 *
 * @example
 * sectionContent('Why runs die').startsWith('## Why runs die'); // true
 */
export function sectionContent(title: string): string {
  const lines = PARAGRAPHS[title] ?? [`Notes on ${title}.`];
  return `## ${title}\n\n${lines.join('\n')}\n\n(end of section)\n`;
}

/**
 * The task the lead gives a writer; the writer reads its file and title back from it.
 *
 * @example
 * writerTask('section-1.md', 'Why runs die');
 */
export function writerTask(file: string, title: string): string {
  return `Write the section titled "${title}" into the file ${file}.`;
}

/**
 * The demo's script: routes by the system prompt to the lead or a writer.
 *
 * @example
 * const model = createPromptModel({ script: demoScript });
 */
export function demoScript(prompt: ScriptPrompt): ScriptAnswer {
  if (prompt.system.includes(LEAD_MARKER)) return leadScript(prompt);
  if (prompt.system.includes(WRITER_MARKER)) return writerScript(prompt);
  return { text: 'I have no script for this conversation.' };
}

function writerScript(prompt: ScriptPrompt): ScriptAnswer {
  const task = prompt.turns.find((turn) => turn.role === 'user')?.text ?? '';
  const match = /titled "([^"]+)" into the file (\S+)\.$/m.exec(task);
  if (match === null) return { text: 'I could not understand my task.' };
  const [, title = '', file = ''] = match;
  const content = sectionContent(title);
  const write = { toolName: 'write_file', input: { path: file, content } };
  const last = lastToolResult(prompt);
  if (last === undefined) {
    return { text: `Writing ${file}.`, toolCalls: [write] };
  }
  if (last.toolName === 'write_file') {
    if (!last.isError) return { text: `Wrote ${file} (${byteLength(content)} bytes).` };
    if (/interrupted/i.test(textOf(last.output))) {
      return {
        text:
          `My write of ${file} was interrupted and may or may not have happened. ` +
          'Checking the file before doing anything.',
        toolCalls: [{ toolName: 'read_file', input: { path: file } }],
      };
    }
    return { text: `Could not write ${file}: ${textOf(last.output)}` };
  }
  if (last.toolName === 'read_file') {
    const found = readContent(last);
    if (found === content) {
      return { text: `${file} is complete (${byteLength(content)} bytes); nothing to redo.` };
    }
    const seen = found === undefined ? 'missing' : `${byteLength(found)} bytes`;
    return {
      text:
        `${file} is incomplete (${seen} of ${byteLength(content)}): ` +
        'the interrupted write left it half-written. Writing it again.',
      toolCalls: [write],
    };
  }
  return { text: `Wrote ${file}.` };
}

function leadScript(prompt: ScriptPrompt): ScriptAnswer {
  const calls = prompt.turns.flatMap((turn) => turn.toolCalls);
  const results = prompt.turns.flatMap((turn) => turn.toolResults);
  const spawned = calls.filter((call) => call.toolName === 'spawn_agent').length;
  const last = lastToolResult(prompt);
  const spawnNext = (): ScriptAnswer => {
    const section = DEMO_SECTIONS[spawned];
    if (section === undefined) return { text: 'Nothing left to delegate.' };
    return {
      text: `Delegating "${section.title}" to a writer.`,
      toolCalls: [
        {
          toolName: 'spawn_agent',
          input: spawnInput('writer', section.title, writerTask(section.file, section.title)),
        },
      ],
    };
  };
  if (last === undefined) return spawned === 0 ? spawnNext() : { text: 'Waiting for nothing.' };
  switch (last.toolName) {
    case 'spawn_agent': {
      const agentId = last.isError ? undefined : agentIdOf(last.output);
      if (agentId === undefined)
        return { text: `Could not start a writer: ${textOf(last.output)}` };
      return {
        text: `Waiting for ${agentId}.`,
        toolCalls: [{ toolName: 'task_wait', input: { agentIds: [agentId] } }],
      };
    }
    case 'task_wait':
      if (last.isError) return { text: `A writer failed: ${textOf(last.output)}` };
      if (spawned < DEMO_SECTIONS.length) return spawnNext();
      return {
        text: 'The writers are done; reading their sections.',
        toolCalls: DEMO_SECTIONS.map((section) => ({
          toolName: 'read_file',
          input: { path: section.file },
        })),
      };
    case 'read_file': {
      const sections = DEMO_SECTIONS.map((section) => {
        const read = results.findLast(
          (result) => result.toolName === 'read_file' && readPath(result) === section.file,
        );
        return (
          (read === undefined ? undefined : readContent(read)) ?? `(${section.file} missing)\n`
        );
      });
      const report = `# Crash-safe agent runs\n\n${sections.join('\n')}`;
      return {
        text: `Assembling ${DEMO_REPORT}.`,
        toolCalls: [{ toolName: 'write_file', input: { path: DEMO_REPORT, content: report } }],
      };
    }
    case 'write_file':
      if (!last.isError) return { text: `Done: ${DEMO_REPORT} holds both sections.` };
      return { text: `Could not write ${DEMO_REPORT}: ${textOf(last.output)}` };
    default:
      return { text: `Stopped after an unexpected ${last.toolName} result.` };
  }
}

/** The input of a `spawn_agent` call. */
function spawnInput(agentType: string, label: string, task: string): JSONValue {
  return { agentType, label, task };
}

/** The most recent tool result, however many injected turns came after it. */
function lastToolResult(prompt: ScriptPrompt): ScriptToolResult | undefined {
  for (let index = prompt.turns.length - 1; index >= 0; index -= 1) {
    const turn = prompt.turns[index];
    if (turn === undefined) continue;
    if (turn.role === 'assistant') return undefined;
    const result = turn.toolResults.at(-1);
    if (result !== undefined) return result;
  }
  return undefined;
}

function agentIdOf(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  if (typeof output === 'object' && output !== null && 'agentId' in output) {
    const id = (output as { agentId: unknown }).agentId;
    return typeof id === 'string' ? id : undefined;
  }
  return undefined;
}

function readContent(result: ScriptToolResult): string | undefined {
  if (result.isError) return undefined;
  const output = result.output as { content?: unknown };
  return typeof output?.content === 'string' ? output.content : undefined;
}

function readPath(result: ScriptToolResult): string | undefined {
  const output = result.output as { path?: unknown };
  return typeof output?.path === 'string' ? output.path : undefined;
}

function textOf(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output);
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
