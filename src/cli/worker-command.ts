import { resolve } from 'node:path';
import { resolveModelSpec } from '../subagents/model-spec.ts';
import { type Command, integerOption, parseCommandLine } from './command.ts';
import { connectStore, requireDatabaseUrl } from '../runs/database-store.ts';
import { EXIT } from '../render/exit-codes.ts';
import { loadAgents } from '../runs/load-agents.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * `llm-agent worker --database URL --agents MODULE`: take runs from the PostgreSQL store and run
 * them, supervising dead ones (see `Worker`), until SIGINT or SIGTERM.
 *
 * @example
 * await workerCommand.run(['--database', url, '--agents', 'agents.ts', '--once'], io);
 */
export const workerCommand: Command = {
  name: 'worker',
  help: `Usage: llm-agent worker --database URL --agents MODULE [--policy ask|auto]
                        [--max-revivals N] [--concurrency N] [--lease MS] [--poll MS]
                        [--schema NAME] [--once]

Take runs from the PostgreSQL store and run them to their end, up to --concurrency at once:
runs submitted with \`llm-agent run --database URL\`, children their runs spawn (a child is a
run of its own that any worker takes; its parent's task_wait waits for it in the database),
and runs a person approved. Every worker also
supervises: a run whose worker died (its lease expired) is fenced — its old worker can never
write to it again — and then, under --policy ask (the default), left awaiting approval
(\`llm-agent revive --database URL RUN\`), or under auto revived at once, up to the cap
counted from its own records. Of several workers, exactly one takes each run.

Options:
  --database URL     the server (default: LLM_AGENT_DATABASE_URL)
  --agents MODULE    the agent-definition module the runs' types come from (required)
  --policy P         ask (default) or auto: what to do with a run whose worker died
  --max-revivals N   the revival cap (default 3)
  --concurrency N    runs carried at once (default 4; a parent waiting for a child holds one)
  --lease MS         how long this worker's hold on a run lasts unrenewed (default 30000)
  --poll MS          how long to wait when there is no work (default 1000)
  --schema NAME      the store's schema (default llm_agent)
  --once             look for work once, do it, and exit
  -h, --help         show this help

Exit codes: 0 stopped by --once; 130 stopped by SIGINT or SIGTERM (the run in progress is
stopped cleanly and stays revivable); 1 the database cannot be used; 2 a mistake in the command.
`,
  async run(argv, io) {
    const { values } = parseCommandLine('worker', argv, {
      database: { type: 'string' },
      agents: { type: 'string' },
      policy: { type: 'string' },
      'max-revivals': { type: 'string' },
      concurrency: { type: 'string' },
      lease: { type: 'string' },
      poll: { type: 'string' },
      schema: { type: 'string' },
      once: { type: 'boolean' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const url = requireDatabaseUrl('worker', values.database, io);
    const module = values.agents as string | undefined;
    if (module === undefined) throw new UserError('worker: --agents MODULE is required');
    const policy = (values.policy as string | undefined) ?? 'ask';
    if (policy !== 'ask' && policy !== 'auto') {
      throw new UserError(`worker: --policy is ask or auto (got ${JSON.stringify(policy)})`);
    }
    const maxRevivals = integerOption(
      'worker',
      '--max-revivals',
      values['max-revivals'] as string | undefined,
      3,
    );
    const concurrency = integerOption(
      'worker',
      '--concurrency',
      values.concurrency as string | undefined,
      4,
    );
    if (concurrency < 1) throw new UserError('worker: --concurrency must be at least 1');
    const leaseMs = integerOption('worker', '--lease', values.lease as string | undefined, 30_000);
    const pollMs = integerOption('worker', '--poll', values.poll as string | undefined, 1000);
    // The runs live in the database: a module that places files beside "the transcript" gets
    // the working folder.
    const agents = await loadAgents(module, {
      transcript: resolve(io.cwd, 'worker.jsonl'),
      cwd: io.cwd,
      env: io.env,
    });
    const store = await connectStore('worker', url, values.schema as string | undefined, {
      leaseMs,
      invocation: io.invocation,
    });
    const controller = new AbortController();
    let stopped = false;
    const unsubscribe =
      io.onInterrupt?.((signal) => {
        stopped = true;
        io.stderr.write(`\n${signal}: stopping the run in progress; it stays revivable.\n`);
        controller.abort();
      }) ?? (() => undefined);
    const { Worker } = await import('../fleet/worker.ts');
    const worker = new Worker({
      store,
      agents,
      resolveModel: (spec) => resolveModelSpec(spec, io.env),
      policy,
      maxRevivals,
      concurrency,
      signal: controller.signal,
      log: (line) =>
        io.stderr.write(`[worker ${terminalSafe(store.owner)}] ${terminalSafe(line)}\n`),
    });
    io.stderr.write(
      `[worker ${terminalSafe(store.owner)}] serving ${terminalSafe(url.replace(/\/\/[^@/]*@/, '//'))} (policy ${policy}, cap ${maxRevivals}, ${concurrency} at once)\n`,
    );
    try {
      if (values.once === true) await worker.tick();
      else await worker.serve(pollMs);
    } finally {
      unsubscribe();
      await store.close();
    }
    return stopped ? EXIT.interrupted : EXIT.ok;
  },
};
