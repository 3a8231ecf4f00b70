import type { Context } from '@ai-sdk/provider-utils';
import type {
  Agent,
  AgentCallParameters,
  AgentStreamParameters,
  GenerateTextResult,
  ModelMessage,
  OutputInterface as Output,
  StreamTextResult,
  ToolSet,
} from 'ai';
import { RevivableRun, type RevivableRunOptions } from './revivable-run.ts';

/**
 * An AI SDK `Agent` (the interface `createAgentUIStreamResponse` and `useChat` routes take) that
 * runs another agent — a `ToolLoopAgent` built with {@link revivableModel} and
 * {@link revivableTools} — as one revivable run at `options.path`: each `generate` or `stream`
 * opens the run (creating, reviving or continuing its transcript), runs the agent inside it,
 * and closes it when the answer is done (a stream: when it ends, fails or is aborted).
 *
 * The transcript, not the caller's history, is what the agent continues from once it holds a
 * conversation: the caller's new user turns (those after its last assistant turn) are added to
 * it. So a chat whose server died mid-tool goes on from the revived conversation — the call
 * answered "interrupted — outcome unknown — NOT retried", the resume notice added — whatever
 * the browser's copy of the history says. Make one per request (it is cheap), naming the chat's
 * transcript. A run that cannot be opened (another process holds it, its revival cap, an
 * unreadable file) is thrown as an Error naming why.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { createAgentUIStreamResponse, ToolLoopAgent } from 'ai';
 * import { RevivableAgent, revivableModel, revivableTools } from 'llm-agent-revival/ai-sdk';
 * const agent = new ToolLoopAgent({ model: revivableModel(openai('gpt-5-mini')), tools: revivableTools({}) });
 * export async function POST(request: Request): Promise<Response> {
 *   const { id, messages } = (await request.json()) as { id: string; messages: unknown[] };
 *   return createAgentUIStreamResponse({
 *     agent: new RevivableAgent(agent, { path: `chats/${id}.jsonl`, agentId: 'chat' }),
 *     uiMessages: messages,
 *   });
 * }
 */
export class RevivableAgent<
  CALL_OPTIONS = never,
  TOOLS extends ToolSet = ToolSet,
  RUNTIME_CONTEXT extends Context = Context,
  OUTPUT extends Output = never,
> implements Agent<CALL_OPTIONS, TOOLS, RUNTIME_CONTEXT, OUTPUT>
{
  /** The `Agent` interface's version. */
  readonly version = 'agent-v1' as const;
  readonly #agent: Agent<CALL_OPTIONS, TOOLS, RUNTIME_CONTEXT, OUTPUT>;
  readonly #options: RevivableRunOptions;

  constructor(
    agent: Agent<CALL_OPTIONS, TOOLS, RUNTIME_CONTEXT, OUTPUT>,
    options: RevivableRunOptions,
  ) {
    this.#agent = agent;
    this.#options = options;
  }

  /** The wrapped agent's id. */
  get id(): string | undefined {
    return this.#agent.id;
  }

  /** The wrapped agent's tools. */
  get tools(): TOOLS {
    return this.#agent.tools;
  }

  /** Run the agent to its answer as the run at `path`, then close the run. */
  async generate(
    options: AgentCallParameters<CALL_OPTIONS, TOOLS, RUNTIME_CONTEXT>,
  ): Promise<GenerateTextResult<TOOLS, RUNTIME_CONTEXT, OUTPUT>> {
    const run = await this.#open();
    try {
      const given = withMessages(options, continuation(run, options));
      return await run.within(() => this.#agent.generate(given));
    } finally {
      await run.close();
    }
  }

  /**
   * Stream the agent's answer as the run at `path`; the run is closed once the stream has
   * ended, failed or been aborted (the transcript keeps recording while it streams).
   */
  async stream(
    options: AgentStreamParameters<CALL_OPTIONS, TOOLS, RUNTIME_CONTEXT>,
  ): Promise<StreamTextResult<TOOLS, RUNTIME_CONTEXT, OUTPUT>> {
    const run = await this.#open();
    let closed: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closed ??= run.close();
      return closed;
    };
    try {
      const given = withMessages(options, continuation(run, options));
      const result = await run.within(() => this.#agent.stream(given));
      // The result's promises settle when the stream ends or fails (rejecting then).
      Promise.resolve(result.finishReason).then(close, close);
      options.abortSignal?.addEventListener('abort', () => void close(), { once: true });
      return result;
    } catch (error) {
      await close();
      throw error;
    }
  }

  async #open(): Promise<RevivableRun> {
    const opened = await RevivableRun.open(this.#options);
    if (!opened.ok) {
      throw new Error(`RevivableAgent: ${this.#options.path}: ${opened.reason}: ${opened.detail}`);
    }
    return opened.run;
  }
}

/**
 * The messages to run: the caller's, for a transcript with no conversation yet; else the
 * transcript's conversation and the caller's user turns after its last assistant turn.
 */
function continuation(
  run: RevivableRun,
  options: { prompt?: string | ModelMessage[]; messages?: ModelMessage[] },
): ModelMessage[] {
  const given: ModelMessage[] =
    options.messages ??
    (typeof options.prompt === 'string'
      ? [{ role: 'user', content: options.prompt }]
      : (options.prompt ?? []));
  const recorded = run.messages;
  if (recorded.length === 0) return given;
  const lastAssistant = given.findLastIndex((message) => message.role === 'assistant');
  return [
    ...recorded,
    ...given.slice(lastAssistant + 1).filter((message) => message.role === 'user'),
  ];
}

/** The call's parameters with `messages` in place of `prompt` or `messages`. */
function withMessages<T extends { prompt?: unknown; messages?: unknown }>(
  options: T,
  messages: ModelMessage[],
): T {
  const { prompt: _prompt, ...rest } = options;
  return { ...rest, messages } as unknown as T;
}
