import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModelV4GenerateResult, LanguageModelV4Prompt } from '@ai-sdk/provider';
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool as agentsTool,
  Usage,
} from '@openai/agents';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { RevivableRun, revivableModel, revivableTools } from '../src/integrations/ai-sdk/index.ts';
import {
  revivableAgentsModel,
  revivableFunctionTools,
  TranscriptSession,
} from '../src/integrations/openai-agents/index.ts';
import {
  type Attack,
  type AttackContext,
  ending,
  faultNotProven,
  REPO,
  runBounded,
  type Verdict,
  verdict,
} from './support.ts';

/*
 * The damage attacks against transcripts the wrappers write, not the Loop's: a real wrapped
 * AI SDK ToolLoopAgent and a real OpenAI Agents JS run (the programs of
 * test/integrations/support), SIGKILLed inside their side-effect tool, leave the tool's durable
 * dispatch as their last line. That line is bit-flipped, overwritten, or cut short (a torn
 * line), and the run is opened again through the same wrapper — which revives it — with a
 * model that does what a model is told: a call answered "never started … call it again if it
 * is still needed" is made again. The tool must never run again: a damaged dispatch is never
 * taken for a call that did not start. The proof that the counter counts: the dispatch line
 * removed whole (the call truly never started) makes the model call it again, once.
 */

setTracingDisabled(true);

const PROGRAMS = {
  'ai-sdk': [join(REPO, 'test/integrations/support/crash-worker.ts'), 'agent'],
  'openai-agents': [join(REPO, 'test/integrations/support/agents-crash-worker.ts')],
} as const;
type Program = keyof typeof PROGRAMS;

/** What the model re-calls with, when told its call never started. */
const AGAIN = 'call_send_again';

/** Run the program until its tool kills it: the transcript, its last line the dispatch. */
async function crashedTranscript(
  context: AttackContext,
  program: Program,
): Promise<Buffer | string> {
  const folder = join(context.folder, `base-${program}`);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, 'main.jsonl');
  const [script, ...args] = PROGRAMS[program];
  const died = await runBounded([script, ...args, path], {
    cwd: folder,
    timeoutMs: 30_000,
    env: { CRASH_PHASE: 'first' },
  });
  const bytes = readFileSync(path);
  const { start, end } = lastLine(bytes);
  const last = bytes.subarray(start, end).toString('utf8');
  if (died.signal !== 'SIGKILL' || !last.includes('"type":"tool-dispatched"')) {
    return `the ${program} program did not die in its tool with its dispatch last (${ending(died)})`;
  }
  return bytes;
}

function lastLine(bytes: Buffer): { start: number; end: number } {
  const end = bytes.length - 1; // the final newline
  return { start: bytes.lastIndexOf(0x0a, end - 1) + 1, end };
}

function aiSdkAnswer(prompt: LanguageModelV4Prompt): LanguageModelV4GenerateResult {
  const text = JSON.stringify(prompt);
  const again = text.includes('never started') && !text.includes(AGAIN);
  return {
    content: again
      ? [{ type: 'tool-call', toolCallId: AGAIN, toolName: 'send', input: '{"to":"ann"}' }]
      : [{ type: 'text', text: 'Done.' }],
    finishReason: again
      ? { unified: 'tool-calls', raw: 'tool_calls' }
      : { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 1, text: undefined, reasoning: undefined },
    },
    warnings: [],
  };
}

function agentsAnswer(input: string | AgentInputItem[]): ModelResponse['output'] {
  const text = JSON.stringify(input);
  if (text.includes('never started') && !text.includes(AGAIN)) {
    return [
      {
        type: 'function_call',
        callId: AGAIN,
        name: 'send',
        arguments: '{"to":"ann"}',
        status: 'completed',
      },
    ];
  }
  return [
    {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Done.' }],
    },
  ];
}

/** Open the run through the wrapper (reviving it) and run it on; how it went, and the sends. */
async function reopen(program: Program, path: string): Promise<{ outcome: string; sends: number }> {
  let sends = 0;
  const send = async () => {
    sends += 1;
    return 'sent';
  };
  try {
    if (program === 'ai-sdk') {
      const opened = await RevivableRun.open({ path });
      if (!opened.ok) return { outcome: `refused (${opened.reason})`, sends };
      const model = new MockLanguageModelV4({
        doGenerate: async (options) => aiSdkAnswer(options.prompt),
      });
      const agent = new ToolLoopAgent({
        model: revivableModel(model),
        stopWhen: stepCountIs(4),
        tools: revivableTools({
          send: tool({ inputSchema: z.object({ to: z.string() }), execute: send }),
        }),
      });
      try {
        await opened.run.within(() => agent.generate({ messages: opened.run.messages }));
      } finally {
        await opened.run.close();
      }
      return { outcome: opened.run.revived ? 'revived, ran on' : 'continued', sends };
    }
    const opened = await TranscriptSession.open({ path });
    if (!opened.ok) return { outcome: `refused (${opened.reason})`, sends };
    const model: Model = {
      getResponse: async (request) => ({ usage: new Usage(), output: agentsAnswer(request.input) }),
      getStreamedResponse: () => {
        throw new Error('not scripted');
      },
    };
    const agent = new Agent({
      name: 'mailer',
      model: revivableAgentsModel(model),
      tools: revivableFunctionTools([
        agentsTool({
          name: 'send',
          description: 'Send a report',
          parameters: z.object({ to: z.string() }),
          execute: send,
        }),
      ]),
    });
    const { session } = opened;
    try {
      await session.within(() => run(agent, [], { session, maxTurns: 4 }));
    } finally {
      await session.close();
    }
    return { outcome: session.revived ? 'revived, ran on' : 'continued', sends };
  } catch (error) {
    return { outcome: `threw ${String(error).split('\n')[0]?.slice(0, 80)}`, sends };
  }
}

interface Mutation {
  label: string;
  mutate: (bytes: Buffer) => Buffer;
}

/**
 * Each mutation of each program's crashed transcript, reopened through its wrapper: the tool
 * must run 0 times after every one. First the proof that the counter counts.
 */
async function mutateAndReopen(
  context: AttackContext,
  name: string,
  mutations: (bytes: Buffer) => Mutation[],
): Promise<Verdict> {
  const replays: string[] = [];
  const outcomes = new Map<string, number>();
  let cases = 0;
  for (const program of Object.keys(PROGRAMS) as Program[]) {
    const base = await crashedTranscript(context, program);
    if (typeof base === 'string') return faultNotProven(base);
    const { start } = lastLine(base);
    const control = join(context.folder, `${name}-${program}-control`, 'main.jsonl');
    mkdirSync(join(control, '..'), { recursive: true });
    writeFileSync(control, base.subarray(0, start), { mode: 0o600 });
    const counted = await reopen(program, control);
    if (counted.sends !== 1) {
      return faultNotProven(
        `${program}: the dispatch removed whole, the model's call again ran ${counted.sends} times, not once (${counted.outcome})`,
      );
    }
    for (const mutation of mutations(base)) {
      if (context.signal.aborted) break;
      const mutated = mutation.mutate(base);
      if (mutated.equals(base)) return faultNotProven(`${mutation.label} changed nothing`);
      const path = join(context.folder, `${name}-${program}-${cases++}`, 'main.jsonl');
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, mutated, { mode: 0o600 });
      const { outcome, sends } = await reopen(program, path);
      const key = `${program} ${outcome}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (sends > 0) replays.push(`${program} ${mutation.label}`);
      if (cases % 200 === 0) context.progress(`${cases} mutations`);
    }
  }
  return verdict(
    replays.length === 0,
    `${cases} mutations of the durable dispatch line of a wrapped ToolLoopAgent's and OpenAI Agents run's transcript; the tool ran again after ${replays.length}${replays.length > 0 ? ` (first: ${replays.slice(0, 3).join('; ')})` : ''}; outcomes ${[...outcomes].map(([key, count]) => `${key} ×${count}`).join(', ')}`,
  );
}

const wrapperBitFlip: Attack = {
  name: 'wrapper-bitflip-last-dispatch',
  family: 'damage',
  what: 'one bit flipped in the last line of a wrapper-written transcript (AI SDK, OpenAI Agents), the durable dispatch of its side-effect tool, newline included (every bit, or a seeded sample in --quick): reopened through the wrapper, the tool never runs again',
  run: (context) =>
    mutateAndReopen(context, 'bit', (bytes) => {
      const { start, end } = lastLine(bytes);
      let bits = Array.from({ length: (end + 1 - start) * 8 }, (_, bit) => start * 8 + bit);
      if (context.quick) bits = bits.filter(() => context.random() < 30 / ((end - start) * 8));
      return bits.map((bit) => ({
        label: `bit ${bit % 8} of byte ${Math.floor(bit / 8)}`,
        mutate: (original) => {
          const copy = Buffer.from(original);
          copy[Math.floor(bit / 8)] = (copy[Math.floor(bit / 8)] ?? 0) ^ (1 << (bit % 8));
          return copy;
        },
      }));
    }),
};

const wrapperTorn: Attack = {
  name: 'wrapper-torn-last-dispatch',
  family: 'damage',
  what: 'the durable dispatch line of a wrapper-written transcript (AI SDK, OpenAI Agents) cut short at every byte, newline last (a seeded sample in --quick): a torn dispatch may have run, so the tool never runs again',
  run: (context) =>
    mutateAndReopen(context, 'torn', (bytes) => {
      const { start, end } = lastLine(bytes);
      let cuts = Array.from({ length: end - start }, (_, index) => start + 1 + index);
      if (context.quick)
        cuts = cuts.filter((cut) => cut === end || context.random() < 20 / (end - start));
      return cuts.map((cut) => ({
        label: `cut after ${cut - start} of ${end + 1 - start} bytes`,
        mutate: (original) => Buffer.from(original.subarray(0, cut)),
      }));
    }),
};

const wrapperRandom: Attack = {
  name: 'wrapper-damaged-last-line-random',
  family: 'damage',
  what: 'seeded random overwrites (1–8 bytes) inside the durable dispatch line of a wrapper-written transcript (AI SDK, OpenAI Agents), its newline kept: the tool never runs again',
  run: (context) =>
    mutateAndReopen(context, 'random', (bytes) => {
      const { start, end } = lastLine(bytes);
      return Array.from({ length: context.quick ? 12 : 150 }, (_, index) => {
        const edits = Array.from({ length: 1 + Math.floor(context.random() * 8) }, () => ({
          at: start + Math.floor(context.random() * (end - start)),
          value: Math.floor(context.random() * 256),
        }));
        return {
          label: `case ${index} (${edits.map((edit) => `${edit.at - start}=${edit.value}`).join(',')})`,
          mutate: (original: Buffer) => {
            const copy = Buffer.from(original);
            for (const edit of edits) copy[edit.at] = edit.value === 0x0a ? 0x0b : edit.value;
            if (copy.equals(original)) copy[start] = (copy[start] ?? 0) ^ 1;
            return copy;
          },
        };
      });
    }),
};

/** The damage attacks on transcripts the wrappers write. */
export const WRAPPER_DAMAGE_ATTACKS: Attack[] = [wrapperBitFlip, wrapperTorn, wrapperRandom];
