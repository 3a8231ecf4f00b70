import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { MockLanguageModelV4 } from 'ai/test';
import { readRecords } from '../../../src/transcript/read-records.ts';
import type { Message, TranscriptRecord } from '../../../src/transcript/records.ts';
import type { PolicyTurn } from './policy-model.ts';
import { resultsOf } from './policy-model.ts';

/** Every record of a transcript. */
export async function recordsOf(path: string): Promise<TranscriptRecord[]> {
  const records: TranscriptRecord[] = [];
  for await (const record of readRecords(path)) records.push(record as TranscriptRecord);
  return records;
}

/** The message records of a transcript. */
export async function messagesOf(path: string): Promise<(Message & { seq: number })[]> {
  return (await recordsOf(path)).flatMap((record) =>
    record.type === 'message'
      ? [
          {
            role: record.role,
            content: record.content,
            seq: record.seq,
            ...(record.extras === undefined ? {} : { extras: record.extras }),
          },
        ]
      : [],
  );
}

/** Every `*.jsonl` below a folder, relative to it, sorted. */
export async function transcriptsBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true });
  return entries.filter((entry) => entry.endsWith('.jsonl')).sort();
}

/** The tool names a model was offered on its first call. */
export function offeredTools(model: MockLanguageModelV4): string[] {
  const first = model.doStreamCalls[0];
  return (first?.tools ?? []).map((tool) => tool.name).sort();
}

/** The agent ids spawn_agent returned so far. */
export function spawnedIds(turns: PolicyTurn[]): string[] {
  return resultsOf(turns, 'spawn_agent').flatMap((result) => {
    const output = result.output as { agentId?: unknown } | null;
    return !result.isError && typeof output?.agentId === 'string' ? [output.agentId] : [];
  });
}

/** The answers task_wait returned so far, by agent id. */
export function joinedAnswers(
  turns: PolicyTurn[],
): Map<string, { status: string; answer?: string; reason?: string }> {
  const answers = new Map<string, { status: string; answer?: string; reason?: string }>();
  for (const result of resultsOf(turns, 'task_wait')) {
    const output = result.output as {
      results?: { agentId: string; status: string; answer?: string; reason?: string }[];
    };
    for (const item of output?.results ?? []) answers.set(item.agentId, item);
  }
  return answers;
}

export { join };
