/**
 * The AI SDK wrapper's cost per step: the same ToolLoopAgent, the same scripted model and tool,
 * run unwrapped and wrapped (revivableModel + revivableTools in a RevivableRun), in one process,
 * interleaved rounds so that drift on a shared machine hits both alike. Reported as ms per step
 * and their ratio; the wrapped run writes its transcript with and without fsync.
 *
 * @example
 * const wrapper = await wrapperSection('bench/data', console.log);
 * console.log(wrapper.ratio.fsync); // wrapped ms/step ÷ unwrapped ms/step
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';
import { RevivableRun, revivableModel, revivableTools } from '../src/integrations/ai-sdk/index.ts';
import { ScriptedModel } from '../src/testing/index.ts';

/** What the section measured. */
export interface WrapperSection {
  /** Tool steps per run (each a model call with one call, then its tool). */
  steps: number;
  rounds: number;
  /** Median ms per step of each variant. */
  msPerStep: { unwrapped: number; wrappedNoSync: number; wrappedFsync: number };
  /** Wrapped ÷ unwrapped, per step. */
  ratio: { noSync: number; fsync: number };
}

function script(steps: number) {
  return [
    ...Array.from({ length: steps }, (_, index) => ({
      calls: [{ id: `call_${index}`, name: 'note', input: { text: `step ${index}` } }],
    })),
    { text: 'Done.' },
  ];
}

const note = tool({
  description: 'Note a line',
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => `noted ${text}`,
});

async function unwrapped(steps: number): Promise<number> {
  const model = new ScriptedModel(script(steps));
  const agent = new ToolLoopAgent({
    model: model.model,
    tools: { note },
    stopWhen: stepCountIs(steps + 1),
  });
  const started = performance.now();
  await agent.generate({ prompt: 'Note things.' });
  return (performance.now() - started) / steps;
}

async function wrapped(
  steps: number,
  folder: string,
  durability: 'fsync' | 'none',
): Promise<number> {
  const model = new ScriptedModel(script(steps));
  const agent = new ToolLoopAgent({
    model: revivableModel(model.model),
    tools: revivableTools({ note }, { idempotency: { note: 'read-only' } }),
    stopWhen: stepCountIs(steps + 1),
  });
  const path = join(folder, `wrapped-${durability}-${performance.now()}.jsonl`);
  const started = performance.now();
  const opened = await RevivableRun.open({ path, sessionOptions: { durability } });
  if (!opened.ok) throw new Error(opened.detail);
  await opened.run.within(() => agent.generate({ prompt: 'Note things.' }));
  await opened.run.close();
  const perStep = (performance.now() - started) / steps;
  await rm(path, { force: true });
  return perStep;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export async function wrapperSection(
  dataFolder: string,
  log: (line: string) => void,
  steps = 100,
  rounds = 5,
): Promise<WrapperSection> {
  const folder = join(dataFolder, 'wrapper');
  await mkdir(folder, { recursive: true });
  await unwrapped(10); // warm-up: module loading and JIT, for both
  await wrapped(10, folder, 'none');
  const times = {
    unwrapped: [] as number[],
    wrappedNoSync: [] as number[],
    wrappedFsync: [] as number[],
  };
  const variants = [
    async () => times.unwrapped.push(await unwrapped(steps)),
    async () => times.wrappedNoSync.push(await wrapped(steps, folder, 'none')),
    async () => times.wrappedFsync.push(await wrapped(steps, folder, 'fsync')),
  ];
  for (let round = 0; round < rounds; round += 1) {
    // The order turns each round: no variant always runs first (after a GC, or the last's garbage).
    for (let index = 0; index < variants.length; index += 1) {
      await variants[(round + index) % variants.length]?.();
    }
  }
  const msPerStep = {
    unwrapped: median(times.unwrapped),
    wrappedNoSync: median(times.wrappedNoSync),
    wrappedFsync: median(times.wrappedFsync),
  };
  const section: WrapperSection = {
    steps,
    rounds,
    msPerStep,
    ratio: {
      noSync: msPerStep.wrappedNoSync / msPerStep.unwrapped,
      fsync: msPerStep.wrappedFsync / msPerStep.unwrapped,
    },
  };
  log(
    `wrapper: ToolLoopAgent ${msPerStep.unwrapped.toFixed(2)} ms/step unwrapped, ${msPerStep.wrappedNoSync.toFixed(2)} wrapped without fsync (×${section.ratio.noSync.toFixed(2)}), ${msPerStep.wrappedFsync.toFixed(2)} with fsync (×${section.ratio.fsync.toFixed(2)})`,
  );
  return section;
}
