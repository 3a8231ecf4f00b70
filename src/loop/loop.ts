import type { LanguageModelV4FunctionTool } from '@ai-sdk/provider';
import { asSchema, type LanguageModel } from 'ai';
import { IDEMPOTENCIES, type Message } from '../transcript/records.ts';
import { TranscriptError } from '../transcript/transcript-error.ts';
import { isBackendOptions, mergeSettings, settingsOf } from './model-call-settings.ts';
import { RunChannel } from './run-handle.ts';
import { type ResolvedLoopOptions, RunState } from './run-state.ts';
import { refuseUnstorableParts, refuseUnsupported } from './sdk-options.ts';
import { toolDefinitionsOf } from './tool-set.ts';
import type { LoopMessage, LoopOptions, RunHandle, RunResult, ToolDefinition } from './types.ts';

export { defaultBackoff } from './run-state.ts';

/**
 * The durable agent loop (docs/loop.md): it asks a model for a turn, runs the tools the turn
 * calls, and goes round until the model answers without calls, keeping the transcript's write
 * order at every step:
 *
 * 1. every turn is appended as it happens;
 * 2. for each call, `tool-dispatched` is appended and made durable before the tool starts;
 * 3. the call's result is appended (as its own tool message, so that a finished sibling of a
 *    parallel batch survives a crash) and made durable before its `tool-settled`;
 * 4. no other message is written while the current turn has unanswered calls: background
 *    deliveries (`takeDeliveries`) are taken only once every call is answered.
 *
 * Invalid input (and a call to a tool that does not exist) is answered with an error result
 * the model reads, with no dispatch: the tool never started, so there is nothing to settle.
 *
 * When every backend fails (after rounds of retries with backoff, honouring `retry-after`),
 * the run ends `failed` and the transcript ends with a `run-failed` record — the cause, the last
 * error, the backend — never with words in the model's mouth. An aborted run ends with a
 * `run-stopped` record and its in-flight calls left open. Both stay revivable: `inspect`
 * reports them with their `halt`, and `revive` carries them on as after a crash.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { Loop } from 'llm-agent-revival';
 * const loop = new Loop({ backends: [openai('gpt-5')], writer: session, tools });
 * const run = loop.start('Summarise README.md');
 * for await (const event of run) if (event.type === 'text-delta') process.stdout.write(event.text);
 * const result = await run; // { status: 'finished', text, usage, stopReason }
 */
export class Loop {
  readonly #options: ResolvedLoopOptions;
  readonly #tools: ReadonlyMap<string, ToolDefinition<unknown>>;
  #declaredTools: Promise<LanguageModelV4FunctionTool[]> | undefined;

  constructor(options: LoopOptions) {
    if (!Array.isArray(options.backends) || options.backends.length === 0) {
      throw new TypeError('Loop: `backends` must list at least one language model');
    }
    refuseUnsupported(options);
    if (typeof options.writer !== 'object' || options.writer === null) {
      throw new TypeError(
        'Loop: `writer` is required: the TranscriptWriter the run is recorded in',
      );
    }
    const tools = new Map<string, ToolDefinition<unknown>>();
    for (const tool of activeOnly(
      toolDefinitionsOf(options.tools ?? [], options.idempotency),
      options.activeTools,
    )) {
      if (tools.has(tool.name)) throw new TypeError(`Loop: two tools are named "${tool.name}"`);
      // Written into every dispatch record: a value a reader refuses would make the transcript
      // unreadable at the first call, so it is refused here, before anything is written.
      if (!IDEMPOTENCIES.includes(tool.idempotency)) {
        throw new TypeError(
          `Loop: tool "${tool.name}" has idempotency ${JSON.stringify(tool.idempotency)}; it must be one of ${IDEMPOTENCIES.join(', ')}`,
        );
      }
      tools.set(tool.name, tool);
    }
    const choice = options.toolChoice;
    if (typeof choice === 'object' && !tools.has(choice.toolName)) {
      throw new TypeError(
        `Loop: toolChoice names "${choice.toolName}", which is not an active tool`,
      );
    }
    const backends = options.backends.map((backend) =>
      isBackendOptions(backend) ? backend : { model: backend },
    );
    this.#options = {
      ...options,
      backends: backends.map((backend) => resolve(backend.model, options)),
      backendSettings: backends.map((backend) =>
        mergeSettings(options.callSettings, settingsOf(backend)),
      ),
    };
    this.#tools = tools;
  }

  /**
   * Carry on a conversation already recorded in the transcript: `messages` is what the transcript
   * holds (a revival's `messages`, a `conversationView` of the records, or the first user turn
   * a caller has just appended). The loop appends only what comes after. The handle never
   * rejects; iterate it for progress, `abort()` it to stop.
   *
   * @example
   * const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
   * if (revived.ok) await new Loop({ backends, writer: revived.session }).run(revived.messages);
   */
  run(messages: readonly LoopMessage[]): RunHandle {
    refuseUnstorableParts(messages, 'Loop.run');
    return this.#launch(async () => [...messages]);
  }

  /**
   * Start a fresh run: append the user turn durably, then run. For a transcript whose
   * conversation is empty (only its `session-meta`); carrying on a recorded conversation is
   * {@link run}'s job, and calling this on one throws a TypeError.
   *
   * @example
   * const session = await Session.create(path, meta);
   * const result = await new Loop({ backends: [model], writer: session }).start('Hello');
   */
  start(prompt: string | Message): RunHandle {
    if (typeof prompt !== 'string') refuseUnstorableParts([prompt], 'Loop.start');
    if (this.#options.writer.state.messages > 0) {
      throw new TypeError(
        `Loop.start: ${this.#options.writer.path} already holds a conversation; use run(messages)`,
      );
    }
    const message: Message =
      typeof prompt === 'string'
        ? { role: 'user', content: [{ type: 'text', text: prompt }] }
        : prompt;
    return this.#launch(async () => {
      const record = await this.#options.writer.appendDurable({ type: 'message', ...message });
      return [{ ...message, seq: record.seq }];
    });
  }

  #launch(prepare: () => Promise<LoopMessage[]>): RunHandle {
    const controller = new AbortController();
    const channel = new RunChannel(controller);
    const outer = this.#options.signal;
    if (outer !== undefined) {
      // The caller's signal stops the run the one way a run stops: its handle's abort.
      const stop = () => channel.handle.abort(text(outer.reason ?? 'aborted'));
      if (outer.aborted) stop();
      else outer.addEventListener('abort', stop, { once: true });
    }
    const run = new RunState(this.#options, this.#tools, controller.signal, (event) =>
      channel.emit(event),
    );
    void (async () => {
      let result: RunResult;
      try {
        const conversation = await prepare();
        result = await run.execute(conversation, () => this.#declareTools());
      } catch (error) {
        const what = TranscriptError.isInstance(error)
          ? 'the transcript could not be written'
          : 'the run stopped on an unexpected error';
        result = run.ended('failed', 'error', `${what}: ${text(error)}`);
      }
      if (result.status === 'aborted') await this.#recordStop(controller.signal.reason);
      try {
        await this.#options.writer.barrier();
      } catch (error) {
        if (result.status !== 'failed') {
          result = run.ended(
            'failed',
            'error',
            `the transcript could not be synced: ${text(error)}`,
          );
        }
      }
      channel.end(result);
    })();
    return channel.handle;
  }

  /**
   * Say in the transcript that the run stopped because it was asked to, so that a reader can
   * tell it from a crash. A transcript that can no longer be written loses only this note: the run
   * is revivable either way.
   */
  async #recordStop(reason: unknown): Promise<void> {
    const writer = this.#options.writer;
    if (writer.state.messages === 0) return;
    try {
      await writer.append({ type: 'run-stopped', reason: stopReason(reason) });
    } catch {
      // Poisoned or closed: the transcript reads as a run that died, which revives the same way.
    }
  }

  /** The tools as the model sees them: names, descriptions, JSON Schemas; no `execute`. */
  #declareTools(): Promise<LanguageModelV4FunctionTool[]> {
    this.#declaredTools ??= (async () => {
      const declared: LanguageModelV4FunctionTool[] = [];
      for (const tool of this.#tools.values()) {
        // Validation is the loop's, before dispatch (validateInput): the model gets the schema.
        declared.push({
          type: 'function',
          name: tool.name,
          inputSchema: await asSchema(tool.inputSchema).jsonSchema,
          description: tool.description,
        });
      }
      return declared;
    })();
    return this.#declaredTools;
  }
}

/** The tools `activeTools` names (all when it is absent); a name that is no tool is an error. */
function activeOnly(
  tools: ToolDefinition<unknown>[],
  active: readonly string[] | undefined,
): ToolDefinition<unknown>[] {
  if (active === undefined) return tools;
  const names = new Set(tools.map((tool) => tool.name));
  const unknown = active.filter((name) => !names.has(name));
  if (unknown.length > 0) {
    throw new TypeError(
      `Loop: activeTools names ${unknown.map((name) => `"${name}"`).join(', ')}, which are not tools`,
    );
  }
  return tools.filter((tool) => active.includes(tool.name));
}

/** One line, at most 500 characters, of an abort's reason. */
function stopReason(reason: unknown): string {
  const line = text(reason).replace(/\s+/g, ' ').trim() || 'aborted';
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A string backend through the loop's provider; a configuration error is the caller's. */
function resolve(backend: LanguageModel, options: LoopOptions): LanguageModel {
  if (typeof backend !== 'string' || options.provider === undefined) return backend;
  try {
    return options.provider.languageModel(backend);
  } catch (error) {
    throw new TypeError(
      `Loop: the provider cannot resolve the backend "${backend}": ${text(error)}`,
      {
        cause: error,
      },
    );
  }
}
