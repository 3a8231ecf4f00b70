/**
 * The command a Confirm starts (`llm-agent revive --yes …`): one at a time, in a process group
 * of its own, its output streamed to the pages line by line, its end said as what its exit
 * code means.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EXIT } from '../render/exit-codes.ts';
import type { EventStream } from './event-stream.ts';
import { shownCommand, type UiAction } from './ui-source.ts';

/** The CLI beside this layer: main.ts from the sources, main.js from dist. */
const MAIN = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../cli/main.ts' : '../cli/main.js', import.meta.url),
);

/**
 * How to start the command.
 *
 * @example
 * const setup: CommandSetup = { cwd: process.cwd(), env: process.env };
 */
export interface CommandSetup {
  /** The working folder of the command. */
  cwd: string;
  /** Its environment (colour turned off). */
  env: Record<string, string | undefined>;
  /** The program and its first arguments (default: this Node and the CLI). */
  command?: string[] | undefined;
  /** Told each command started and how it ended, a line each (the ui's terminal). */
  log?: ((line: string) => void) | undefined;
  /**
   * The words the command is shown starting with: the way the user ran `llm-agent` (`npx
   * llm-agent-revival` under npx), so that what the log shows can be pasted. Default `llm-agent`.
   */
  invocation?: string | undefined;
}

/**
 * Why a command was not started: the status and text to answer the POST with.
 *
 * @example
 * const busy: StartRefusal = { status: 409, text: 'a revive is already running' };
 */
export type StartRefusal = { status: number; text: string };

/**
 * The one command that may run at a time, and its output sent to the pages.
 *
 * @example
 * const runner = new ConfirmCommand(setup, events);
 * const refused = runner.start(action); // undefined: started
 */
export class ConfirmCommand {
  #child: ChildProcess | undefined;
  readonly #setup: CommandSetup;
  readonly #events: EventStream;

  constructor(setup: CommandSetup, events: EventStream) {
    this.#setup = setup;
    this.#events = events;
  }

  /** Whether a command is running now. */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** Starts `action`'s command, or says why not (one runs already, nothing to do, no program). */
  start(action: UiAction): StartRefusal | undefined {
    if (this.#child !== undefined) return { status: 409, text: 'a revive is already running' };
    if (action.runs === 0) return { status: 409, text: 'nothing to revive' };
    const [program, ...before] = this.#setup.command ?? [process.execPath, MAIN];
    const env: Record<string, string | undefined> = { ...this.#setup.env, NO_COLOR: '1' };
    delete env.FORCE_COLOR;
    // A process group of its own: Ctrl-C in the ui's terminal reaches the ui, which stops the
    // command once, cleanly (a second signal would make revive give up at once).
    const child = spawn(program as string, [...before, ...action.argv], {
      cwd: this.#setup.cwd,
      env,
      stdio: [action.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid === undefined) {
      child.once('error', () => undefined);
      return { status: 500, text: 'the command could not be started' };
    }
    this.#child = child;
    // A command that ends before reading all of it closes the pipe: its exit says why.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(action.input);
    // In a group of its own the command no longer hears the terminal: if the ui's process ends
    // without closing (a second Ctrl-C, a crash), the command is told to stop on the way out.
    const onExit = (): void => stopGroup(child);
    process.once('exit', onExit);
    child.once('close', () => process.off('exit', onExit));
    const shown = shownCommand(action, this.#setup.invocation);
    this.#setup.log?.(`${action.verb} started from the page (pid ${child.pid}): ${shown}`);
    this.#stream(child, action, shown);
    return undefined;
  }

  /** Stops the running command's group (SIGTERM, once) and waits for its end. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    stopGroup(child);
    await new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) done();
      else child.once('close', () => done());
    });
  }

  #stream(child: ChildProcess, action: UiAction, shown: string): void {
    const events = this.#events;
    events.clearLog();
    events.send('progress', `$ ${shown}`, true);
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue;
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const text of lines) events.send('progress', text, true);
      });
      stream.on('end', () => {
        if (rest !== '') events.send('progress', rest, true);
        rest = '';
      });
    }
    child.on('error', (error) => events.send('progress', `could not run: ${error.message}`, true));
    child.on('close', (code, signal) => {
      const ended = endedLine(action.verb, code, signal);
      this.#setup.log?.(ended.line);
      events.send('done', JSON.stringify(ended), true);
      this.#child = undefined;
    });
  }
}

/**
 * Stop a command's process group, once (revive takes a second signal as "give up at once").
 * Its group is its own (it was started detached), so this reaches what it started too.
 */
function stopGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
}

/** What each exit code of `revive` means, for the page (docs/cli.md lists them). */
const REVIVE_ENDINGS: Partial<Record<number, string>> = {
  [EXIT.failure]: 'a revival or a revived run failed; the log above says which',
  [EXIT.usage]: 'the command was refused; the log above says why',
  [EXIT.unreadable]: 'nothing to revive, and a transcript is unreadable',
  [EXIT.claimed]: 'another reviver holds the tree; nothing was written',
  [EXIT.interrupted]: 'stopped; the runs stay revivable',
};

/**
 * The line that ends a command's log — `revive ended (exit code 0)` when it succeeded, else
 * what the code means; a signal is said as one — and whether it succeeded.
 */
function endedLine(
  verb: UiAction['verb'],
  code: number | null,
  signal: string | null,
): { line: string; ok: boolean } {
  if (code === null) {
    return {
      line: `${verb} ended by ${signal ?? 'a signal'}: the runs stay as it left them`,
      ok: false,
    };
  }
  if (code === EXIT.ok) return { line: `${verb} ended (exit code 0)`, ok: true };
  const meaning = REVIVE_ENDINGS[code];
  return {
    line: `${verb} failed (exit code ${code}${meaning === undefined ? '' : `: ${meaning}`})`,
    ok: false,
  };
}
