import type { LoopMessage } from '../loop/types.ts';
import type { Message } from '../transcript/records.ts';
import { Session, type SessionOptions } from '../transcript/session.ts';
import { describeError, TranscriptError } from '../transcript/transcript-error.ts';
import type { ChildRecord } from './family.ts';
import { agentsFoldersOf, parentLinkPath } from './child-layout.ts';

/**
 * Append a task as the first user turn, durably; returns it as a loop takes it (with its seq).
 *
 * @example
 * const first = await appendTask(session, 'Summarise README.md');
 * const run = loop.run([first]);
 */
export async function appendTask(session: Session, task: string): Promise<LoopMessage> {
  const message: Message = { role: 'user', content: [{ type: 'text', text: task }] };
  const record = await session.appendDurable({ type: 'message', ...message });
  return { ...message, seq: record.seq };
}

/**
 * What {@link createChildSession} did.
 *
 * @example
 * const created = await createChildSession({ child, parentPath, model, task });
 * if (created.ok) loop.run([created.first]);
 */
export type ChildSessionResult =
  | { ok: true; session: Session; first: LoopMessage }
  /** The transcript exists: this spawn call made it before a crash lost the call's result. */
  | { ok: false; existing: true }
  | { ok: false; existing: false; detail: string };

/**
 * Create a child's transcript: its `session-meta` (naming the parent transcript, relative, and
 * the spawn call), then its task as the first user turn, both durable before this resolves —
 * so the child exists on disk, with its task, before it starts. Never throws.
 *
 * @example
 * const created = await createChildSession({ child, parentPath, model: 'openai:gpt-5', task });
 */
export async function createChildSession(request: {
  child: ChildRecord;
  parentPath: string;
  model: string;
  task: string;
  sessionOptions?: SessionOptions;
}): Promise<ChildSessionResult> {
  const { child } = request;
  let session: Session;
  try {
    session = await Session.create(
      child.sessionPath,
      {
        agentId: child.agentId,
        agentType: child.agentType,
        label: child.label,
        model: request.model,
        parent: {
          transcript: parentLinkPath(child.sessionPath, request.parentPath),
          callId: child.callId,
        },
      },
      { ...request.sessionOptions, realFolders: agentsFoldersOf(child.sessionPath) },
    );
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
    return { ok: true, session, first: await appendTask(session, request.task) };
  } catch (error) {
    await session.close().catch(() => undefined);
    return { ok: false, existing: false, detail: `cannot write the task: ${describeError(error)}` };
  }
}
