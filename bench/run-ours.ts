import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { LoopMessage, LoopOptions, RunHandle, ToolDefinition } from '../src/loop/types.ts';
import { type Durability, nodeFileSystem, Session } from '../src/transcript/index.ts';
import { countingFileSystem } from './counting-file-system.ts';
import {
  countingModel,
  FINAL_TEXT,
  OPENING_TEXT,
  STEP_TOOL_NAME,
  stepCallId,
  stepToolOutput,
} from './counting-model.ts';
import type { AtSteps, PersistenceRow } from './persistence-result.ts';
import { StepClock, summariseTimeline } from './step-timeline.ts';

interface LoopLike {
  run(messages: LoopMessage[]): RunHandle;
}
type LoopConstructor = new (options: LoopOptions) => LoopLike;

const LOOP_MODULE = '../src/loop/index.ts';

/** The real Loop when src/loop exports one, else null (the bench then says so). */
export async function loadLoop(): Promise<LoopConstructor | null> {
  try {
    const module = (await import(LOOP_MODULE)) as { Loop?: LoopConstructor };
    return typeof module.Loop === 'function' ? module.Loop : null;
  } catch {
    return null;
  }
}

const META = { agentId: 'bench', agentType: 'bench', label: 'bench', model: 'mock:scripted' };

/**
 * Run the scripted `steps`-step agent through our Loop (or, while there is none, through the
 * Session with the record sequence the Loop writes) under one durability, counting every byte
 * and sync through a wrapping file system.
 *
 * @example
 * const row = await runOurs('fsync', 1000, 'bench/data/persistence', [10, 100, 1000]);
 */
export async function runOurs(
  durability: Durability,
  steps: number,
  folder: string,
  at: readonly number[],
  useLoop = true,
): Promise<PersistenceRow> {
  await mkdir(folder, { recursive: true });
  const path = join(folder, `ours-${durability}-${process.pid}.jsonl`);
  await rm(path, { force: true });
  await rm(`${path}.owner`, { force: true });
  const { fileSystem, counts } = countingFileSystem(nodeFileSystem);
  const clock = new StepClock();
  const bytesAt: AtSteps = {};
  const sample = (step: number) => {
    clock.mark(step);
    if (at.includes(step - 1)) bytesAt[String(step - 1)] = counts.bytesWritten;
  };
  const Loop = useLoop ? await loadLoop() : null;
  const name = `ours ${durability}${Loop === null ? ' (Session only)' : ''}`;
  clock.start();
  const session = await Session.create(path, META, { durability, fileSystem });
  let engine: string;
  if (Loop !== null) {
    engine = 'Loop (src/loop) with MockLanguageModelV4';
    const tool: ToolDefinition<{ value: number }> = {
      name: STEP_TOOL_NAME,
      description: 'Count one up.',
      inputSchema: z.object({ value: z.number() }),
      idempotency: 'idempotent',
      execute: async ({ value }) => stepToolOutput(value),
    };
    const loop = new Loop({
      backends: [countingModel(steps, sample)],
      writer: session,
      tools: [tool as ToolDefinition<never>],
      maxTurns: steps + 5,
    });
    const result = await loop.run([
      { role: 'user', content: [{ type: 'text', text: OPENING_TEXT }] },
    ]);
    if (result.status !== 'finished') {
      await session.close();
      return {
        ok: false,
        system: 'ours',
        name,
        reason: `the Loop ended ${result.status}: ${result.error ?? result.stopReason}`,
      };
    }
  } else {
    engine = 'the Session alone, with the records and barriers the Loop writes (no model library)';
    await writeLikeTheLoop(session, steps, sample);
  }
  await session.close();
  clock.stop();
  const summary = summariseTimeline(clock, at);
  await rm(path, { force: true });
  await rm(`${path}.owner`, { force: true });
  return {
    ok: true,
    system: 'ours',
    name,
    engine,
    steps,
    bytesAt,
    bytesTotal: counts.bytesWritten,
    bytesMeaning: 'bytes written to the transcript (counted by a wrapping FileSystem)',
    syncs: counts.syncs + counts.folderSyncs,
    syncsMeaning: 'fdatasync on the transcript + fsync on its folder',
    notes: [],
    ...summary,
  };
}

/** The Loop's write order for one scripted run, straight onto the Session (§3 of the spec). */
async function writeLikeTheLoop(
  session: Session,
  steps: number,
  mark: (step: number) => void,
): Promise<void> {
  await session.append({
    type: 'message',
    role: 'user',
    content: [{ type: 'text', text: OPENING_TEXT }],
  });
  for (let step = 1; step <= steps + 1; step += 1) {
    mark(step);
    if (step > steps) {
      await session.append({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: FINAL_TEXT }],
      });
      await session.barrier();
      return;
    }
    const callId = stepCallId(step);
    const input = { value: step };
    await session.append({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId, toolName: STEP_TOOL_NAME, input }],
    });
    await session.appendDurable({
      type: 'tool-dispatched',
      callId,
      toolName: STEP_TOOL_NAME,
      inputDigest: `sha256:${'0'.repeat(64)}`,
      idempotency: 'idempotent',
    });
    await session.appendDurable({
      type: 'message',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId,
          toolName: STEP_TOOL_NAME,
          output: stepToolOutput(step),
          isError: false,
        },
      ],
    });
    await session.append({ type: 'tool-settled', callId, status: 'completed' });
  }
}
