import type { RunHandle } from '../loop/types.ts';
import type { CommandIo } from './command-io.ts';

/**
 * Stops every run of a command cleanly on the user's interrupt (Ctrl-C, SIGTERM): each run is
 * aborted at its next safe point (its tools get their signal; the model call in progress is
 * dropped, never half-written) and records `run-stopped` with the signal's name, so its
 * transcript stays revivable and `status` says `stopped` — better than a kill, which the
 * transcript also survives, because in-flight tools get to stop.
 *
 * @example
 * const stopper = new RunStopper(io, 'llm-agent revive runs/a.jsonl');
 * stopper.add(run);
 * await run;
 * stopper.dispose();
 * if (stopper.stopped) return EXIT.interrupted;
 */
export class RunStopper {
  readonly #runs = new Set<RunHandle>();
  readonly #io: CommandIo;
  readonly #resume: string;
  readonly #unsubscribe: () => void;
  #stopped = false;
  #reason = 'SIGINT: interrupted by the user';

  /** `resume` is the command that carries the runs on, shown when they are stopped. */
  constructor(io: CommandIo, resume: string) {
    this.#io = io;
    this.#resume = resume;
    this.#unsubscribe = io.onInterrupt?.((signal) => this.stop(signal)) ?? (() => undefined);
  }

  /** True once the runs were asked to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Watch a run (aborted at once when the command is already stopping). */
  add(run: RunHandle): void {
    if (this.#stopped) run.abort(this.#reason);
    else this.#runs.add(run);
  }

  /** Abort every run watched; `signal` names why (it becomes the runs' stop reason). */
  stop(signal = 'SIGINT'): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#reason = `${signal}: ${signal === 'SIGTERM' ? 'terminated' : 'interrupted by the user'}`;
    this.#io.stderr.write(
      `\nStopping: every run is aborted and stays revivable; carry on with: ${this.#resume}\n(Ctrl-C again to quit at once.)\n`,
    );
    for (const run of this.#runs) run.abort(this.#reason);
  }

  /** Stop listening for the interrupt. */
  dispose(): void {
    this.#unsubscribe();
  }
}
