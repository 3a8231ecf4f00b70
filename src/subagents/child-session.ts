import type { LoopMessage } from '../loop/types.ts';
import type { Message } from '../transcript/records.ts';
import { describeError, TranscriptError } from '../transcript/transcript-error.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import type { ChildRecord } from './family.ts';
import type { RunPlaces } from './run-places.ts';

/**
 * Append a task as the first user turn, durably; returns it as a loop takes it (with its seq).
 *
 * @example
 * const first = await appendTask(writer, 'Summarise README.md');
 * const run = loop.run([first]);
 */
export async function appendTask(writer: TranscriptWriter, task: string): Promise<LoopMessage> {
  const message: Message = { role: 'user', content: [{ type: 'text', text: task }] };
  const record = await writer.appendDurable({ type: 'message', ...message });
  return { ...message, seq: record.seq };
}

/**
 * What {@link createChildSession} did.
 *
 * @example
 * const created = await createChildSession({ places, child, parentPath, model, task });
 * if (created.ok) loop.run([created.first]);
 */
export type ChildSessionResult =
  | { ok: true; writer: TranscriptWriter; first: LoopMessage }
  /** The transcript exists: this spawn call made it before a crash lost the call's result. */
  | { ok: false; existing: true }
  | { ok: false; existing: false; detail: string };

/**
 * Create a child's transcript: its `session-meta` (naming the parent transcript, relative, and
 * the spawn call), then its task as the first user turn, both durable before this resolves —
 * so the child exists on disk, with its task, before it starts. Never throws.
 *
 * @example
 * const created = await createChildSession({ places: filePlaces({}), child, parentPath, model: 'openai:gpt-5', task });
 */
export async function createChildSession(request: {
  places: RunPlaces;
  child: ChildRecord;
  parentPath: string;
  model: string;
  task: string;
}): Promise<ChildSessionResult> {
  const { child, places } = request;
  let writer: TranscriptWriter;
  try {
    writer = await places.create(child.sessionPath, {
      agentId: child.agentId,
      agentType: child.agentType,
      label: child.label,
      model: request.model,
      parent: {
        transcript: places.parentLink(child.sessionPath, request.parentPath),
        callId: child.callId,
      },
    });
  } catch (error) {
    if (TranscriptError.isInstance(error) && (error.code === 'exists' || error.code === 'locked')) {
      return { ok: false, existing: true };
    }
    return {
      ok: false,
      existing: false,
      detail: `cannot create the transcript: ${describeError(error)}`,
    };
  }
  try {
    return { ok: true, writer, first: await appendTask(writer, request.task) };
  } catch (error) {
    await writer.close().catch(() => undefined);
    return { ok: false, existing: false, detail: `cannot write the task: ${describeError(error)}` };
  }
}
