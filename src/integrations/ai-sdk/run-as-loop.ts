import type { LoopMessage, LoopOptions, RunHandle, RunResult } from '../../loop/types.ts';
import { RunChannel } from '../../loop/run-handle.ts';
import { RunRecorder, withRecorder } from './run-recorder.ts';

/**
 * How a wrapped program's run ended: its last text, why it stopped, what it used.
 *
 * @example
 * const answer: ProgramAnswer = { text: 'Done.', finishReason: 'stop' };
 */
export interface ProgramAnswer {
  text: string;
  finishReason: string;
  totalUsage?: { inputTokens?: number | undefined; outputTokens?: number | undefined };
}

/**
 * Run a wrapped program (an AI SDK agent or call, an OpenAI Agents run) over `messages` as a
 * Loop's run would, for an agent type's `createLoop`: the calls of the last turn that never
 * started answered first, `body` run as the transcript's current run, a handle that never
 * rejects. A run stopped through the handle says so in the transcript, as the Loop does.
 *
 * @example
 * const handle = runAsLoop(options, messages, (recorder, signal) =>
 *   agent.generate({ messages: recorder.modelMessages, abortSignal: signal }));
 */
export function runAsLoop(
  options: LoopOptions,
  messages: readonly LoopMessage[],
  body: (recorder: RunRecorder, signal: AbortSignal) => Promise<ProgramAnswer>,
): RunHandle {
  const controller = new AbortController();
  const channel = new RunChannel(controller);
  void (async () => {
    let result: RunResult;
    try {
      const recorder = new RunRecorder(options.writer, messages);
      await recorder.answerNeverStarted(recorder.unansweredCalls());
      const answer = await withRecorder(recorder, () => body(recorder, controller.signal));
      result = {
        status: 'finished',
        text: answer.text,
        usage: {
          inputTokens: answer.totalUsage?.inputTokens ?? 0,
          outputTokens: answer.totalUsage?.outputTokens ?? 0,
        },
        stopReason: answer.finishReason,
      };
    } catch (error) {
      const aborted = controller.signal.aborted;
      if (aborted) await recordStop(options, controller.signal.reason);
      result = {
        status: aborted ? 'aborted' : 'failed',
        text: '',
        usage: { inputTokens: 0, outputTokens: 0 },
        stopReason: aborted ? 'aborted' : 'error',
        ...(aborted ? {} : { error: error instanceof Error ? error.message : String(error) }),
      };
    }
    channel.end(result);
  })();
  return channel.handle;
}

/** Say in the transcript that the run was stopped, as the Loop does; a failed write loses only this. */
async function recordStop(options: LoopOptions, reason: unknown): Promise<void> {
  const text = (reason instanceof Error ? reason.message : String(reason ?? 'aborted')).slice(
    0,
    500,
  );
  try {
    await options.writer.append({ type: 'run-stopped', reason: text || 'aborted' });
    await options.writer.barrier();
  } catch {
    // The transcript then reads as a run whose process died, which revives the same way.
  }
}
