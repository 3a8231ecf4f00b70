import { stat } from 'node:fs/promises';
import type { ModelMessage } from 'ai';
import { Revival, type TreeClaim } from '../../revival/index.ts';
import { conversationView } from '../../transcript/conversation-view.ts';
import { readRecords } from '../../transcript/read-records.ts';
import type { Message, ParentLink } from '../../transcript/records.ts';
import { Session, type SessionOptions } from '../../transcript/session.ts';
import { childTranscriptPath } from '../../subagents/child-layout.ts';
import { answerFromChild, type ChildAnswer } from './child-answers.ts';
import { RunRecorder, withRecorder } from './run-recorder.ts';

/**
 * Which run {@link RevivableRun.open} opens, and how it is named in a new transcript's
 * `session-meta`.
 *
 * @example
 * const options: RevivableRunOptions = { path: 'runs/support-42.jsonl', agentId: 'support', maxRevivals: 3 };
 */
export interface RevivableRunOptions {
  /** The transcript: created when missing, revived when its process died, continued when finished. */
  path: string;
  /** The run's agent id (default `main`); a transcript of another agent is refused. */
  agentId?: string;
  /** Recorded for `status` and `revive` (default: the agent id). */
  agentType?: string;
  label?: string;
  /** The model spec recorded for people (default `ai-sdk`). */
  model?: string;
  /** How many revivals this transcript is allowed (default 3). */
  maxRevivals?: number;
  /** For a child run: its parent's transcript (relative to the child's folder) and call. */
  parent?: ParentLink;
  /**
   * The claim on the run's tree that a reviver already holds: a child's run opened while its
   * parent is being revived (a subagent carried on) inspects and revives under it.
   */
  treeClaim?: TreeClaim;
  /** Durability, clock, file system of the session (tests). */
  sessionOptions?: SessionOptions;
}

/**
 * Why {@link RevivableRun.open} opened nothing: `running` (another process holds the run),
 * `revival-cap`, `unreadable`, or `io-error`; `detail` is one line for a human.
 *
 * @example
 * const opened = await RevivableRun.open({ path: 'runs/a.jsonl' });
 * if (!opened.ok) console.error(`${opened.reason}: ${opened.detail}`);
 */
export interface RunNotOpened {
  ok: false;
  reason: 'running' | 'revival-cap' | 'unreadable' | 'io-error';
  detail: string;
}

/**
 * One run of an AI SDK program (a `ToolLoopAgent`, `generateText`, `streamText`), recorded in a
 * transcript of ours so that `status`, `show`, `revive` and `ui` read it as a Loop's. Open it,
 * call the agent inside `within` with {@link revivableModel} and {@link revivableTools} in it,
 * close it. Opening a transcript whose process died revives it first — every call that was in
 * flight answered "interrupted — outcome unknown — NOT retried", the resume notice added, the
 * revival counted against the cap — and `messages` is then what the same agent continues
 * from, under the same run id.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { ToolLoopAgent } from 'ai';
 * import { RevivableRun, revivableModel, revivableTools } from 'llm-agent-revival/ai-sdk';
 * const agent = new ToolLoopAgent({ model: revivableModel(openai('gpt-5-mini')), tools: revivableTools({}) });
 * const opened = await RevivableRun.open({ path: 'runs/main.jsonl' });
 * if (!opened.ok) throw new Error(opened.detail);
 * const { run } = opened;
 * try {
 *   const result = await run.within(() =>
 *     run.messages.length === 0
 *       ? agent.generate({ prompt: 'What is the weather in Paris?' })
 *       : agent.generate({ messages: run.messages }),
 *   );
 *   console.log(result.text);
 * } finally {
 *   await run.close();
 * }
 */
export class RevivableRun {
  readonly #recorder: RunRecorder;
  /** The transcript's path. */
  readonly path: string;
  /** The run's agent id: the same before and after a revival. */
  readonly agentId: string;
  /** True when opening revived the run (its process had died, or it failed or was stopped). */
  readonly revived: boolean;

  private constructor(recorder: RunRecorder, path: string, agentId: string, revived: boolean) {
    this.#recorder = recorder;
    this.path = path;
    this.agentId = agentId;
    this.revived = revived;
    recorders.set(this, recorder);
  }

  /**
   * Open the run at `options.path`: create it, revive it, or continue it (holding its writer
   * lock until {@link close}). Never throws for the transcript's state: a run another process
   * holds, one at its revival cap, an unreadable file are answers with a reason.
   */
  static async open(
    options: RevivableRunOptions,
  ): Promise<{ ok: true; run: RevivableRun } | RunNotOpened> {
    const agentId = options.agentId ?? 'main';
    if (!(await exists(options.path))) {
      const session = await Session.create(
        options.path,
        {
          agentId,
          agentType: options.agentType ?? agentId,
          label: options.label ?? agentId,
          model: options.model ?? 'ai-sdk',
          ...(options.parent === undefined ? {} : { parent: options.parent }),
        },
        options.sessionOptions,
      );
      return opened(new RevivableRun(new RunRecorder(session, []), options.path, agentId, false));
    }
    const maxRevivals = options.maxRevivals ?? 3;
    const claim = options.treeClaim === undefined ? {} : { treeClaim: options.treeClaim };
    const found = await Revival.inspect({ path: options.path, maxRevivals, ...claim });
    if (found.revivable) {
      const revived = await Revival.revive({
        path: options.path,
        agentId,
        maxRevivals,
        ...claim,
        ...(options.sessionOptions === undefined ? {} : { sessionOptions: options.sessionOptions }),
      });
      if (!revived.ok) return notOpened(revived.reason, revived.detail);
      const recorder = new RunRecorder(revived.session, revived.messages);
      await answerPendingJoins(recorder, options.path, revived.pendingJoins, revived.treeClaim);
      await recorder.answerNeverStarted(revived.neverDispatched.map((call) => call.callId));
      return opened(new RevivableRun(recorder, options.path, agentId, true));
    }
    if (found.reason !== 'finished' && found.reason !== 'empty') {
      return notOpened(found.reason, found.detail ?? found.reason);
    }
    let session: Session;
    try {
      session = await Session.open(options.path, options.sessionOptions);
    } catch (error) {
      return notOpened('running', error instanceof Error ? error.message : String(error));
    }
    const records = [];
    for await (const record of readRecords(options.path)) records.push(record);
    const meta = records.find((record) => record.type === 'session-meta');
    if (meta?.type === 'session-meta' && meta.agentId !== agentId) {
      await session.close();
      return notOpened(
        'unreadable',
        `${options.path} is the transcript of agent "${meta.agentId}", not "${agentId}"`,
      );
    }
    const messages: Message[] = conversationView(records);
    return opened(
      new RevivableRun(new RunRecorder(session, messages), options.path, agentId, false),
    );
  }

  /**
   * The conversation to continue from, as the AI SDK takes it (`agent.generate({ messages })`):
   * empty for a new run; after a revival, every call answered and the resume notice last.
   */
  get messages(): ModelMessage[] {
    return this.#recorder.modelMessages;
  }

  /**
   * Run `body` as this run: the wrapped models and tools it calls, however deep, record into
   * this run's transcript. A streamed response keeps recording after `body` returns, until the
   * stream ends; close the run after that.
   */
  within<T>(body: () => T): T {
    return withRecorder(this.#recorder, body);
  }

  /** Make everything durable and let the transcript go (its writer lock, a revival's claim). */
  async close(): Promise<void> {
    try {
      await this.#recorder.session.barrier();
    } finally {
      await this.#recorder.session.close();
    }
  }
}

const recorders = new WeakMap<RevivableRun, RunRecorder>();

/**
 * The recorder of a run, for the other integrations of this package (not exported by it).
 *
 * @example
 * const recorder = recorderOf(run);
 */
export function recorderOf(run: RevivableRun): RunRecorder {
  const recorder = recorders.get(run);
  if (recorder === undefined) throw new TypeError('not a RevivableRun');
  return recorder;
}

/**
 * Answer each join the crash left open from its children (a subagent tool's call): a finished
 * child's answer, or the child revived and run on to its end under its own id.
 */
async function answerPendingJoins(
  recorder: RunRecorder,
  path: string,
  joins: readonly { callId: string; agentIds: string[] }[],
  treeClaim: TreeClaim,
): Promise<void> {
  for (const join of joins) {
    const answers: ChildAnswer[] = [];
    for (const agentId of join.agentIds) {
      answers.push(await answerFromChild(childTranscriptPath(path, agentId), agentId, treeClaim));
    }
    const isError = answers.length === 0 || answers.every((answer) => answer.isError);
    const text = answers.map((answer) => answer.text).join('\n\n');
    await recorder.answerJoin(join.callId, text || 'no child answered this call', isError);
  }
}

function opened(run: RevivableRun): { ok: true; run: RevivableRun } {
  return { ok: true, run };
}

function notOpened(reason: string, detail: string): RunNotOpened {
  const known = ['running', 'revival-cap', 'unreadable', 'io-error'] as const;
  const kind = (known as readonly string[]).includes(reason)
    ? (reason as RunNotOpened['reason'])
    : 'unreadable';
  return { ok: false, reason: kind, detail };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
