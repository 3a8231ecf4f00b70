import { access } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Loop } from '../loop/loop.ts';
import type { RunResult } from '../loop/types.ts';
import { type AgentRegistry, modelSpecOf } from '../subagents/agent-definition.ts';
import { Composer } from '../subagents/composer.ts';
import { ModelSpecError, resolveModelSpec } from '../subagents/model-spec.ts';
import { isAgentId } from '../transcript/records.ts';
import { TranscriptError } from '../transcript/transcript-error.ts';
import { type Command, parseCommandLine } from './command.ts';
import { type CommandIo, hintCommand, writeLine } from '../runs/command-io.ts';
import { databaseOptions, maskedNote } from '../render/database-hint.ts';
import { EXIT } from '../render/exit-codes.ts';
import { connectStore, databaseUrl } from '../runs/database-store.ts';
import { loadAgents } from '../runs/load-agents.ts';
import { quote } from '../render/format-status.ts';
import { followRun } from '../render/run-progress.ts';
import { terminalSafe, terminalSafeLines } from '../render/terminal-safe.ts';
import { RunStopper } from '../runs/run-stopper.ts';
import { asUserError, UserError } from '../runs/user-error.ts';

/**
 * `llm-agent run --agents MODULE [--type T] [--out PATH] PROMPT`: start a run of one agent
 * type from an agent-definition module, with children as it spawns them, and run it to the end.
 *
 * @example
 * await runCommand.run(['--agents', 'agents.ts', '--out', 'runs/a.jsonl', 'Hello'], io);
 */
export const runCommand: Command = {
  name: 'run',
  help: `Usage: llm-agent run --agents MODULE [--type T] [--out PATH] [--label L] [--id ID] PROMPT…
       llm-agent run --database URL [--schema NAME] --agents MODULE [--type T] [--id ID] PROMPT…

Start a run of agent type T on PROMPT (the positional words, joined by spaces), recorded in
the transcript PATH, and run it to the end; children it spawns are recorded in
PATH's .agents/ folder. Progress goes to stderr, the final answer to stdout.

MODULE (a .ts or .js file) default-exports a registry of agent types → AgentDefinition
({ description, model, system, tools?, maxTurns?, canSpawn? }), or a function
({ transcript, cwd, env }) returning one. A model is an AI SDK model or a spec:
  openai:MODEL                       key from OPENAI_API_KEY
  anthropic:MODEL                    key from ANTHROPIC_API_KEY
  openai-compatible:BASEURL#MODEL    key from OPENAI_COMPATIBLE_API_KEY (optional)

Options:
  --agents MODULE  the agent-definition module (required)
  --type T         the agent type to run (default: "main" if defined, else the first type)
  --out PATH       the transcript to create (default: runs/<id>-<time>.jsonl); must end in
                   .jsonl (status and revive find transcripts by it) and must not exist
  --label L        a label for people (default: the type)
  --id ID          the run's agent id (default: the type): 1 to 64 letters, digits, . _ -
  --database URL   submit the run to the PostgreSQL store instead: it is queued for
                   \`llm-agent worker\`, and the command prints its name (--id, default
                   <type>-<time>) and exits
  --schema NAME    the store's schema (default llm_agent)
  -h, --help       show this help

If the process dies, \`llm-agent status\` shows the run and \`llm-agent revive PATH --agents
MODULE\` carries it on.

Exit codes: 0 the run finished; 1 it ended otherwise (failed, aborted, turn limit);
2 a mistake in the command or the module (the line says which); 130 stopped by Ctrl-C
(every run aborted cleanly; revive carries them on).
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('run', argv, {
      agents: { type: 'string' },
      type: { type: 'string' },
      out: { type: 'string' },
      label: { type: 'string' },
      id: { type: 'string' },
      database: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const module = values.agents as string | undefined;
    if (module === undefined)
      throw new UserError('run: --agents MODULE is required (see llm-agent run --help)');
    const prompt = positionals.join(' ').trim();
    if (prompt === '') throw new UserError('run: give the PROMPT (see llm-agent run --help)');
    const agentId = (values.id as string | undefined) ?? (values.type as string | undefined);
    if (agentId !== undefined && !isAgentId(agentId)) {
      throw new UserError(
        `run: ${JSON.stringify(agentId)} is not a valid agent id (1 to 64 letters, digits, . _ -; starting with a letter or digit; no ..)`,
      );
    }
    const url = databaseUrl(values.database);
    if (url !== undefined) {
      return submitRun(io, url, {
        module,
        prompt,
        type: values.type as string | undefined,
        id: agentId,
        label: values.label as string | undefined,
        schema: values.schema as string | undefined,
      });
    }
    const given = values.out as string | undefined;
    // `status` and `revive` look for *.jsonl: a transcript under another name would be lost.
    if (given !== undefined && (!given.endsWith('.jsonl') || basename(given) === '.jsonl')) {
      throw new UserError(
        `run: --out ${JSON.stringify(given)} must name a .jsonl file (status and revive find transcripts by that ending)`,
      );
    }
    const out = resolve(io.cwd, given ?? `runs/${agentId ?? 'main'}-${timestamp()}.jsonl`);
    if (
      await access(out).then(
        () => true,
        () => false,
      )
    ) {
      throw new UserError(
        `${values.out ?? out}: a transcript already exists there (revive it, or choose another --out)`,
      );
    }
    const registry = await loadAgents(module, { transcript: out, cwd: io.cwd, env: io.env });
    const agentType = chooseType(module, registry, values.type as string | undefined);
    const { result, stopped } = await runRoot(io, registry, module, {
      path: out,
      agentType,
      task: prompt,
      agentId: agentId ?? agentType,
      label: (values.label as string | undefined) ?? agentType,
    });
    // The model's answer, made safe for a terminal (the exact text is in the transcript).
    if (result.text !== '') writeLine(io.stdout, terminalSafeLines(result.text));
    if (stopped) return EXIT.interrupted;
    if (result.status === 'finished') return EXIT.ok;
    // As after Ctrl-C: the transcript keeps the run, and one command carries it on.
    io.stderr.write(
      `The run ${result.status}; its transcript keeps it revivable (${hintCommand(io, `status ${quote(values.out ?? out)}`)} says why). Carry on with: ${hintCommand(io, `revive ${quote(values.out ?? out)} --agents ${quote(module)}`)}\n`,
    );
    return EXIT.failure;
  },
};

/**
 * `run --database`: record the run in the PostgreSQL store as `queued` — its `session-meta` and
 * the prompt, committed — for a worker to take, and say so.
 */
async function submitRun(
  io: CommandIo,
  url: string,
  request: {
    module: string;
    prompt: string;
    type: string | undefined;
    id: string | undefined;
    label: string | undefined;
    schema: string | undefined;
  },
): Promise<number> {
  const registry = await loadAgents(request.module, {
    transcript: resolve(io.cwd, 'worker.jsonl'),
    cwd: io.cwd,
    env: io.env,
  });
  const agentType = chooseType(request.module, registry, request.type);
  const run = request.id ?? `${agentType}-${timestamp()}`;
  const definition = registry[agentType] as AgentRegistry[string];
  const store = await connectStore('run', url, request.schema, {
    invocation: io.invocation,
  });
  try {
    await store.submit(
      run,
      {
        agentId: run,
        agentType,
        label: request.label ?? agentType,
        model: modelSpecOf(definition),
      },
      request.prompt,
    );
  } catch (error) {
    if (TranscriptError.isInstance(error) && error.code === 'exists') {
      throw new UserError(
        `run: a run named ${JSON.stringify(run)} exists in the database (choose another --id)`,
      );
    }
    throw error;
  } finally {
    await store.close();
  }
  io.stdout.write(`${run}\n`);
  const target = databaseOptions(url, request.schema);
  io.stderr.write(
    `Submitted ${terminalSafe(run)} (queued): a worker takes it — ${hintCommand(io, `worker ${target.args} --agents ${quote(request.module)}`)}${maskedNote(target.masked)}\n`,
  );
  return EXIT.ok;
}

function chooseType(module: string, registry: AgentRegistry, wanted: string | undefined): string {
  const types = Object.keys(registry);
  if (wanted !== undefined) {
    if (!Object.hasOwn(registry, wanted)) {
      throw new UserError(`${module}: no agent type "${wanted}" (it defines: ${types.join(', ')})`);
    }
    return wanted;
  }
  return Object.hasOwn(registry, 'main') ? 'main' : (types[0] as string);
}

/**
 * Start one root run with a composer (children included), follow its progress on stderr and
 * wait for the whole tree. A transcript that cannot be created or a model that cannot be
 * used is the user's mistake: a one-line {@link UserError}.
 *
 * @example
 * const { result } = await runRoot(io, registry, 'agents.ts', { path, agentType: 'main', task: 'Hello' });
 */
export async function runRoot(
  io: CommandIo,
  registry: AgentRegistry,
  module: string,
  request: { path: string; agentType: string; task: string; agentId: string; label: string },
): Promise<{ result: RunResult; stopped: boolean }> {
  const followers: Promise<void>[] = [];
  const stopper = new RunStopper(
    io,
    hintCommand(io, `revive ${quote(request.path)} --agents ${quote(module)}`),
  );
  const composer = new Composer({
    registry,
    createLoop: (options) => new Loop(options),
    resolveModel: (spec) => resolveModelSpec(spec, io.env),
    onEvent: (event) => {
      if (event.type === 'child-start') {
        io.stderr.write(
          `${io.err.dim(`[${terminalSafe(event.child.agentId)}]`)} started (${terminalSafe(event.child.agentType)}, "${terminalSafe(event.child.label)}")\n`,
        );
        stopper.add(event.run);
        followers.push(followRun(event.child.agentId, event.run, io.stderr, io.err));
      }
    },
  });
  let started: Awaited<ReturnType<Composer['start']>>;
  try {
    started = await composer.start(request);
  } catch (error) {
    stopper.dispose();
    // A model that cannot be used stops the run before its transcript exists: name the module.
    if (error instanceof ModelSpecError) {
      throw new UserError(
        `${module}: agent type "${request.agentType}": ${error.message} (nothing was written)`,
      );
    }
    throw asUserError(request.path, error);
  }
  stopper.add(started.run);
  io.stderr.write(
    `${io.err.dim(`[${terminalSafe(started.agentId)}]`)} started (${terminalSafe(request.agentType)}) → ${terminalSafe(request.path)}\n`,
  );
  // On one screen (both streams a terminal) the answer printed on stdout is not said twice.
  const oneScreen = isTerminal(io.stdout) && isTerminal(io.stderr);
  await followRun(started.agentId, started.run, io.stderr, io.err, {
    finalAnswerShown: oneScreen,
  });
  const result = await started.run;
  await composer.idle();
  await Promise.all(followers);
  stopper.dispose();
  return { result, stopped: stopper.stopped };
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
}

function isTerminal(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}
