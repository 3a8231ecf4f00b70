import type { AgentInputItem, Session } from '@openai/agents';
import {
  RevivableRun,
  type RevivableRunOptions,
  type RunNotOpened,
  recorderOf,
} from '../ai-sdk/revivable-run.ts';
import { type RunRecorder, withRecorder } from '../ai-sdk/run-recorder.ts';
import { normalizeConversation } from '../../transcript/normalize-conversation.ts';
import type { Message } from '../../transcript/records.ts';
import { itemsOf, kindOf, resultText, textOfInput } from './items.ts';

/** Set by {@link TranscriptSession}'s static block: its constructor is private. */
let sessionOf: (recorder: RunRecorder) => TranscriptSession;

/**
 * OpenAI Agents JS's `Session` over one of our transcripts: `run(agent, input, { session })`
 * reads its history from the transcript and records into it, so `status`, `show`, `revive`
 * and `ui` read the run as a Loop's. Opening a transcript whose process died revives it first
 * (calls in flight answered "interrupted — outcome unknown — NOT retried", the resume notice
 * added); continue it with `run(agent, [], { session })`. The model's turns are recorded by
 * {@link revivableAgentsModel} (before any tool starts) and each call by
 * {@link revivableFunctionTools} (dispatch durable before the tool): call `run` inside
 * `within`. A transcript is append-only: `popItem` and `clearSession` are refused.
 *
 * @example
 * import { Agent, OpenAIProvider, run } from '@openai/agents';
 * import { TranscriptSession, revivableAgentsModel, revivableFunctionTools } from 'llm-agent-revival/openai-agents';
 * const agent = new Agent({ name: 'mailer', model: revivableAgentsModel(await new OpenAIProvider().getModel('gpt-5-mini')), tools: revivableFunctionTools([]) });
 * const opened = await TranscriptSession.open({ path: 'runs/mailer.jsonl' });
 * if (!opened.ok) throw new Error(opened.detail);
 * const { session } = opened;
 * try {
 *   const input = session.revived ? [] : 'Send ann the report.';
 *   const result = await session.within(() => run(agent, input, { session }));
 *   console.log(result.finalOutput);
 * } finally {
 *   await session.close();
 * }
 */
export class TranscriptSession implements Session {
  readonly #run: RevivableRun | undefined;
  readonly #recorder: RunRecorder;

  private constructor(recorder: RunRecorder, run?: RevivableRun) {
    this.#recorder = recorder;
    this.#run = run;
  }

  static {
    sessionOf = (recorder) => new TranscriptSession(recorder);
  }

  /** Open (create, revive or continue) the transcript at `options.path`; see `RevivableRun.open`. */
  static async open(
    options: RevivableRunOptions,
  ): Promise<{ ok: true; session: TranscriptSession } | RunNotOpened> {
    const opened = await RevivableRun.open({ model: 'openai-agents', ...options });
    return opened.ok
      ? { ok: true, session: new TranscriptSession(recorderOf(opened.run), opened.run) }
      : opened;
  }

  /** True when opening revived the run: continue it with `run(agent, [], { session })`. */
  get revived(): boolean {
    return this.#run?.revived ?? false;
  }

  /** Run `body` as this run: the wrapped model and tools it calls record into its transcript. */
  within<T>(body: () => T): T {
    return withRecorder(this.#recorder, body);
  }

  /** Make everything durable and let the transcript go. */
  async close(): Promise<void> {
    // A session over a run an agent type carries on is closed by whoever opened that run.
    if (this.#run === undefined) await this.#recorder.session.barrier();
    else await this.#run.close();
  }

  /** The transcript's path: one transcript, one session. */
  async getSessionId(): Promise<string> {
    return this.#run?.path ?? this.#recorder.session.path;
  }

  /** The conversation as the model is sent it (the last `limit` items when given). */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = itemsOf(normalizeConversation(this.#recorder.messages));
    return limit === undefined ? items : items.slice(Math.max(0, items.length - limit));
  }

  /**
   * Record what the runner adds that is not already recorded: user and system turns, and
   * results the runner gave itself (a tool it could not run). A model output item the
   * transcript does not hold means the model was not wrapped, and is refused.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const recorder = this.#recorder;
    for (const item of items) {
      const kind = kindOf(item);
      if (kind === 'user' || kind === 'system') {
        const message: Message = {
          role: kind,
          content: [{ type: 'text', text: textOfInput(item) }],
        };
        // The wrapped model recorded it before the model read it; the runner hands it over at the end.
        if (!recorder.takeAhead(message)) await recorder.recordUser(message);
      } else if (kind === 'result') {
        const callId = (item as { callId: string }).callId;
        await recorder.recordUnrunAnswer(callId, resultText(item), false);
      } else if (kind === 'output') {
        const callId = (item as { callId?: string }).callId;
        if (callId !== undefined && !recorder.hasCall(callId)) {
          throw new TypeError(
            `TranscriptSession: function call ${callId} is not in the transcript: give the agent revivableAgentsModel(model)`,
          );
        }
      } else {
        throw new TypeError(
          `TranscriptSession: a ${String((item as { type?: string }).type)} item cannot be stored in a transcript`,
        );
      }
    }
    await recorder.session.barrier();
  }

  /** Refused: a transcript is append-only (what happened stays recorded). */
  async popItem(): Promise<AgentInputItem | undefined> {
    throw new TypeError('TranscriptSession: a transcript is append-only; popItem is not supported');
  }

  /** Refused: a transcript is append-only; start a new one with another path. */
  async clearSession(): Promise<void> {
    throw new TypeError(
      'TranscriptSession: a transcript is append-only; open a new path instead of clearing it',
    );
  }
}

/**
 * A session over a run already open (an agent type's run, whose transcript the composer
 * opened and closes): for the other files of this integration, not exported by it.
 *
 * @example
 * const session = transcriptSessionOver(recorder);
 */
export function transcriptSessionOver(recorder: RunRecorder): TranscriptSession {
  return sessionOf(recorder);
}
