import type { LoopEvent, RunHandle, RunResult } from './types.ts';

/**
 * The plumbing behind a {@link RunHandle}: events are kept in order and every iterator sees all
 * of them from the first, however late it starts; the result promise never rejects.
 *
 * @example
 * const channel = new RunChannel(controller);
 * channel.emit({ type: 'turn-start', turn: 1 });
 * channel.end(result);
 * for await (const event of channel.handle) console.log(event.type);
 */
export class RunChannel {
  readonly handle: RunHandle;
  readonly #events: LoopEvent[] = [];
  #ended = false;
  #wake: Array<() => void> = [];
  #resolve: (result: RunResult) => void = () => undefined;

  constructor(controller: AbortController) {
    const result = new Promise<RunResult>((resolve) => {
      this.#resolve = resolve;
    });
    this.handle = {
      result,
      abort(reason?: string) {
        if (!controller.signal.aborted) controller.abort(new RunAbortedError(reason));
      },
      // biome-ignore lint/suspicious/noThenProperty: a run handle is awaitable by design.
      then(onFulfilled, onRejected) {
        return result.then(onFulfilled, onRejected);
      },
      [Symbol.asyncIterator]: () => this.#iterate(),
    };
  }

  /** Record an event for every iterator. Ignored once the run has ended. */
  emit(event: LoopEvent): void {
    if (this.#ended) return;
    this.#events.push(event);
    this.#notify();
  }

  /** End the run: emit `run-end` and resolve the result. Only the first call counts. */
  end(result: RunResult): void {
    if (this.#ended) return;
    this.#events.push({ type: 'run-end', result });
    this.#ended = true;
    this.#notify();
    this.#resolve(result);
  }

  #notify(): void {
    const waiting = this.#wake;
    this.#wake = [];
    for (const wake of waiting) wake();
  }

  async *#iterate(): AsyncGenerator<LoopEvent> {
    let index = 0;
    while (true) {
      while (index < this.#events.length) {
        const event = this.#events[index] as LoopEvent;
        index += 1;
        yield event;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }
}

/**
 * The reason a run's signal carries when `abort()` was called (named `AbortError`, as
 * `fetch` and the AI SDK expect).
 *
 * @example
 * const execute: ToolDefinition['execute'] = async (input, context) =>
 *   context.signal.reason instanceof RunAbortedError ? 'the run was aborted' : 'done';
 */
export class RunAbortedError extends Error {
  constructor(reason?: string) {
    super(reason ?? 'The run was aborted.');
    this.name = 'AbortError';
  }
}
