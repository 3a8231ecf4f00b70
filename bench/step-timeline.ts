/**
 * The clock of a scripted run. A step is one model turn asking for a tool plus that tool's
 * call, and everything the system persists around them; step k ends when model call k + 1
 * starts. Both systems are timed at the same point — the scripted model being asked — so the
 * cost of a step includes whatever each system does between two model calls.
 *
 * Time spent by the bench itself measuring (reading a database's WAL position, summing a
 * saver's bytes) is paused out of the marks.
 *
 * @example
 * const clock = new StepClock();
 * clock.start();
 * // in the model: clock.mark(step)
 * clock.stop();
 * const summary = summariseTimeline(clock, [10, 100, 1000]);
 */
export class StepClock {
  /** `marks[k - 1]`: when model call k started (milliseconds, pauses removed). */
  readonly marks: number[] = [];
  readonly #now: () => number;
  #startedAt = 0;
  #stoppedAt = 0;
  #paused = 0;

  /** `now` is injected for tests; the bench uses `performance.now`. */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  start(): void {
    this.#startedAt = this.#now();
  }

  mark(step: number): void {
    this.marks[step - 1] = this.#now() - this.#paused;
  }

  /** Run a measurement whose time must not count as the system's. */
  async pause<T>(measure: () => T | Promise<T>): Promise<T> {
    const before = this.#now();
    try {
      return await measure();
    } finally {
      this.#paused += this.#now() - before;
    }
  }

  stop(): void {
    this.#stoppedAt = this.#now() - this.#paused;
  }

  get startedAt(): number {
    return this.#startedAt;
  }

  get totalMs(): number {
    return this.#stoppedAt - this.#startedAt;
  }
}

/** One point of the per-step cost curve: mean milliseconds per step over steps `from..to`. */
export interface CurvePoint {
  from: number;
  to: number;
  msPerStep: number;
}

/** What a timeline comes to. */
export interface TimelineSummary {
  totalMs: number;
  /** Mean duration of steps in (N/2, N], for each requested N: the cost of a step "at" N. */
  msPerStepAt: Record<string, number>;
  /** Mean cost per step over log-spaced ranges of steps: the plot's data. */
  curve: CurvePoint[];
}

/** Step durations: `durations[k - 1]` is step k's, from its model call to the next. */
export function stepDurations(marks: readonly number[]): number[] {
  const durations: number[] = [];
  for (let index = 0; index + 1 < marks.length; index += 1) {
    const here = marks[index];
    const next = marks[index + 1];
    if (here === undefined || next === undefined) break;
    durations.push(next - here);
  }
  return durations;
}

function meanOf(values: readonly number[], from: number, to: number): number {
  let sum = 0;
  let count = 0;
  for (let step = from; step <= to; step += 1) {
    const value = values[step - 1];
    if (value === undefined) continue;
    sum += value;
    count += 1;
  }
  return count === 0 ? Number.NaN : sum / count;
}

/**
 * Summarise a finished clock: total, cost per step at the given step counts, and a curve of
 * mean cost per step over ranges 1, 2, 3–4, 5–8, … (halves of powers of two, finer above 16).
 */
export function summariseTimeline(clock: StepClock, at: readonly number[]): TimelineSummary {
  const durations = stepDurations(clock.marks);
  const msPerStepAt: Record<string, number> = {};
  for (const step of at) {
    msPerStepAt[String(step)] = meanOf(durations, Math.floor(step / 2) + 1, step);
  }
  const curve: CurvePoint[] = [];
  let from = 1;
  while (from <= durations.length) {
    const width = Math.max(1, Math.floor(from / 3));
    const to = Math.min(durations.length, from + width - 1);
    curve.push({ from, to, msPerStep: meanOf(durations, from, to) });
    from = to + 1;
  }
  return { totalMs: clock.totalMs, msPerStepAt, curve };
}
