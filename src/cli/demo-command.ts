import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HALT_AT, runDemo } from '../demo/demo-story.ts';
import { EXIT } from '../render/exit-codes.ts';
import type { CommandIo } from '../runs/command-io.ts';
import { UserError } from '../runs/user-error.ts';
import { type Command, parseCommandLine } from './command.ts';

/**
 * `llm-agent demo [DIR]`: the whole story offline. A lead agent and two writers, driven by the
 * scripted model, run in a child process that is SIGKILLed while a writer's `write_file` is
 * half-way through its file; then `status` shows the interrupted tree, `revive --yes` brings
 * it back, and it runs to the end — the interrupted call reaching the model as outcome
 * unknown, and the model reading the file before writing it again. Every claim is checked and
 * the exit code says whether all held. With `--stop-after-crash` it stops after `status`,
 * leaving the crashed tree for a person to revive (with `llm-agent ui` or `revive`).
 *
 * @example
 * await demoCommand.run(['/tmp/demo'], io);
 * await demoCommand.run(['/tmp/crashed', '--stop-after-crash'], io); // then: llm-agent ui /tmp/crashed
 */
export const demoCommand: Command = {
  name: 'demo',
  help: `Usage: llm-agent demo [DIR] [--stop-after-crash]
       llm-agent demo --database URL

Run the offline demo in DIR (default: a new temporary folder; if given, DIR must be empty
or not exist). No API key and no network: the model is scripted and ships with the package.

  1. A lead agent delegates two sections of a report to two writer agents (spawn_agent,
     task_wait); the tools write real files in DIR/workspace/.
  2. The run is a child process (llm-agent run); while a writer's write_file has put half
     of ${HALT_AT} on disk, the demo SIGKILLs the process: no cleanup, no goodbye.
  3. llm-agent status DIR shows the interrupted tree.
  4. llm-agent revive DIR/lead.jsonl --yes revives it, children before parents, and runs
     it to the end: the interrupted call reaches the model as "interrupted, outcome
     unknown, NOT retried", and the model reads the file before writing it again.
  5. The demo checks every claim it made and prints the result.

The transcripts stay in DIR: try llm-agent status DIR and llm-agent show on them.

With --stop-after-crash, steps 1 to 3 only: the demo checks its claims so far (the process
was killed mid-write_file, the file is half-written, the tree is revivable and revive would
answer the call as interrupted) and stops, leaving the crashed tree in DIR for you to revive:
in a browser with llm-agent ui DIR (the plan, and a Confirm button), or with llm-agent revive
DIR/lead.jsonl --yes. The demo's agents are built in: neither needs --agents.

With --database URL, the scale-out story on PostgreSQL instead (in a new schema of its own):
two worker processes serve a submitted run; the one that takes it is SIGKILLed inside its
deploy; the other finds the expired lease and fences the run, which waits for approval; the
demo approves (printing what a person is asked) and the surviving worker revives it to its end,
the deploy answered as interrupted, never run again; a third worker paused (SIGSTOP) inside
another deploy past its lease is fenced out, and refused when it resumes.

Options:
  --stop-after-crash  stop after the crash and status (steps 1 to 3), leaving the tree to revive
  --database URL      the scale-out story on PostgreSQL (a new schema of its own)
  -h, --help          show this help

Exit codes: 0 every check held; 1 a check failed (the line says which); 2 DIR is not empty
or a bad option.
`,
  async run(argv, io, command) {
    const { values, positionals } = parseCommandLine('demo', argv, {
      database: { type: 'string' },
      'stop-after-crash': { type: 'boolean' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    if (typeof values.database === 'string') {
      if (positionals.length > 0) throw new UserError('demo: --database takes no DIR');
      if (values['stop-after-crash'] === true) {
        throw new UserError('demo: --stop-after-crash is for the offline demo, not --database');
      }
      const { databaseDemo } = await import('../demo/database-demo.ts');
      return databaseDemo(io, values.database);
    }
    if (positionals.length > 1)
      throw new UserError('demo: give at most one DIR (see llm-agent demo --help)');
    const folder = await prepareFolder(positionals[0], io);
    if (command === undefined) throw new TypeError('demo: runs other commands, so it needs main');
    return runDemo(folder, io, { stopAfterCrash: values['stop-after-crash'] === true, command });
  },
};

async function prepareFolder(given: string | undefined, io: CommandIo): Promise<string> {
  if (given === undefined) return mkdtemp(join(tmpdir(), 'llm-agent-demo-'));
  const folder = resolve(io.cwd, given);
  const entries = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    if (error.code === 'ENOTDIR') throw new UserError(`${given}: not a folder`);
    throw new UserError(`${given}: cannot read (${error.code})`);
  });
  if (entries === null) await mkdir(folder, { recursive: true, mode: 0o700 });
  else if (entries.length > 0) {
    throw new UserError(`${given}: not empty; the demo needs an empty or new folder`);
  }
  return folder;
}
