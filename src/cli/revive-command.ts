import { createInterface } from 'node:readline/promises';
import { EXIT } from '../render/exit-codes.ts';
import { formatCount, plural, quote, table } from '../render/format-status.ts';
import type { RunNode } from '../render/run-node.ts';
import { terminalSafe as safe } from '../render/terminal-safe.ts';
import { approveRuns } from '../runs/approve-runs.ts';
import { databaseOptions, maskedNote } from '../render/database-hint.ts';
import { type CommandIo, hintCommand } from '../runs/command-io.ts';
import { connectStore, databaseUrl } from '../runs/database-store.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import {
  claimedTree,
  claimTrees,
  executePlan,
  type RevivalOutcome,
  registriesFor,
} from '../runs/execute-plan.ts';
import { findTranscripts } from '../runs/find-transcripts.ts';
import { inspectTree } from '../runs/inspect-tree.ts';
import { RunStopper } from '../runs/run-stopper.ts';
import { findSalvageable, salvage, salvageText } from '../runs/salvage-damaged.ts';
import {
  askReconciles,
  type PlanReconciliations,
  reconcilePlanText,
} from '../runs/reconcile-plan.ts';
import { parseReconciledInput, readBoundedText } from '../runs/reconciled-input.ts';
import { planText, planTreeRevival } from '../runs/tree-revival-plan.ts';
import { UserError } from '../runs/user-error.ts';
import { type Command, integerOption, parseCommandLine } from './command.ts';
import { writeLine } from '../runs/command-io.ts';

/**
 * `llm-agent revive PATH…`: plan the revival of the trees at PATH (children before parents),
 * show the plan, ask (or take `--yes`), revive, and run the revived runs to the end — each
 * revived child taken back under its id, so its parent's pending `task_wait` is answered by it.
 *
 * @example
 * await reviveCommand.run(['runs/main.jsonl', '--agents', 'agents.ts', '--yes'], io);
 */
export const reviveCommand: Command = {
  name: 'revive',
  help: `Usage: llm-agent revive PATH… [--agents MODULE] [--yes] [--max-revivals N] [--salvage]
                        [--reconciled-stdin]
       llm-agent revive --database URL [--schema NAME] [--yes] RUN…

Revive the interrupted runs recorded at PATH (a transcript with its children, or a folder)
and run them to the end, children before parents:

  1. plan: which runs restart, what each revival repairs (calls in flight are answered
     as interrupted, outcome unknown, NOT retried; joins stay open for the children),
     which runs are left alone and why, and about how many tokens resuming sends; a
     call whose tool (in MODULE) has a reconcile is asked about now — it only looks —
     and the plan shows its answer, which the revival records;
  2. ask: on a terminal, a y/N question; otherwise --yes is required (without it the
     command refuses and writes nothing);
  3. revive each run (Revival.revive: repair, tell the run it was resumed, count the
     revival), then run it again with the agent types of MODULE, each child under its
     original id so that its parent's pending task_wait is answered by it.

Progress goes to stderr; the plan and the results to stdout. A tree with a run held by
a live process is not touched. One reviver per tree: before writing anything, revive
claims each tree it revives (a claim file beside the tree's root, held until its revived
runs end), checks every parent link and joined child of the tree, and makes the plan
again under the claim; another reviver of any run of a claimed tree refuses, naming the
holder (exit code 7).

Options:
  --agents MODULE    the agent-definition module the runs were started with (see
                     llm-agent run --help); not needed for the demo's own transcripts
  --yes, -y          do not ask
  --max-revivals N   refuse to revive a run already revived N times (default ${DEFAULT_MAX_REVIVALS})
  --reconciled-stdin record the reconcile answers given on stdin (JSON, as \`ui\` passes
                     the answers its plan showed) instead of asking those tools again;
                     needs --yes
  --salvage          cut damage that ends a transcript (a last line that fails its checksum
                     yet ends in a newline: it may be a durable record) into a sidecar, and
                     answer every call of that run's last turn as interrupted, never run
  --database URL     approve runs of the PostgreSQL store instead (revive --database URL
                     RUN…): runs a supervisor left awaiting approval are shown as a plan,
                     confirmed, and marked approved; a worker revives each exactly once
  --schema NAME      the store's schema (default llm_agent)
  -h, --help         show this help

Exit codes: 0 every revived run finished (or nothing needed reviving); 1 a revival or a
revived run failed; 2 a mistake in the command, or --yes missing off a terminal; 4 nothing
to revive but a transcript is unreadable; 6 declined at the prompt (nothing was written); 7
another reviver holds a tree (or revived it after the plan was made; nothing was written);
130 stopped by Ctrl-C (every run aborted cleanly and stays revivable).
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('revive', argv, {
      agents: { type: 'string' },
      yes: { type: 'boolean', short: 'y' },
      'max-revivals': { type: 'string' },
      salvage: { type: 'boolean' },
      'reconciled-stdin': { type: 'boolean' },
      database: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    const url = databaseUrl(values.database);
    if (url !== undefined) {
      if (positionals.length === 0) {
        const target = databaseOptions(url, values.schema as string | undefined);
        throw new UserError(
          `revive: give the RUNs to approve (${hintCommand(io, `status ${target.args}`)} lists them${maskedNote(target.masked)})`,
        );
      }
      const store = await connectStore('revive', url, values.schema as string | undefined, {
        invocation: io.invocation,
      });
      try {
        return await approveRuns(io, store, positionals, {
          yes: values.yes === true,
          maxRevivals: integerOption(
            'revive',
            '--max-revivals',
            values['max-revivals'] as string | undefined,
            DEFAULT_MAX_REVIVALS,
          ),
        });
      } finally {
        await store.close();
      }
    }
    if (positionals.length === 0)
      throw new UserError('revive: give a transcript or folder PATH (see llm-agent revive --help)');
    const maxRevivals = integerOption(
      'revive',
      '--max-revivals',
      values['max-revivals'] as string | undefined,
      DEFAULT_MAX_REVIVALS,
    );
    const paths = await findTranscripts(positionals, io.cwd);
    let roots = await inspectTree(paths, maxRevivals, io.cwd);
    if (values.salvage === true) {
      const salvaged = await salvageFirst(roots, values.yes === true, io);
      if (salvaged === 'declined') return EXIT.declined;
      if (salvaged > 0) roots = await inspectTree(paths, maxRevivals, io.cwd);
    }
    const plan = planTreeRevival(roots);
    io.stdout.write(planText(plan, io.out));
    if (plan.revivals.length === 0) {
      // Left alone because another reviver holds the tree: said with its own exit code.
      if (plan.blocked.some((blocked) => claimedTree(blocked.node) !== null)) return EXIT.claimed;
      // Nothing to revive is only good news when nothing is unreadable either.
      const unreadable = plan.leftAlone.some((left) => left.node.state === 'unreadable');
      return unreadable ? EXIT.unreadable : EXIT.ok;
    }
    const registries = await registriesFor(
      plan,
      roots,
      values.agents as string | undefined,
      io,
      async () => (await import('../demo/demo-agents.ts')).default,
    );
    const reconciliations = await reconcilePlan(plan, roots, registries, values, io);
    io.stdout.write(reconcilePlanText(plan, reconciliations, io.out));
    if (values.yes !== true) {
      const question = `Revive ${plural(plan.revivals.length, 'run')}, sending about ${formatCount(plan.estimatedTokens)} tokens? [y/N] `;
      if (io.stdin.isTTY !== true) {
        throw new UserError(
          'revive: stdin is not a terminal, so nobody can confirm: pass --yes to revive without asking (nothing was written)',
        );
      }
      if (!(await confirm(io, question))) {
        writeLine(io.stderr, 'Declined; nothing was written.');
        return EXIT.declined;
      }
    }
    const claimed = await claimTrees(plan, roots, registries, paths, maxRevivals, io);
    if (!claimed.ok) {
      writeLine(io.stderr, claimed.message);
      return claimed.code;
    }
    const stopper = new RunStopper(io, hintCommand(io, ['revive', ...argv].map(quote).join(' ')));
    let outcomes: RevivalOutcome[];
    try {
      outcomes = await executePlan(
        plan,
        roots,
        registries,
        maxRevivals,
        io,
        reconciliations,
        stopper,
        claimed.claims,
      );
    } finally {
      stopper.dispose();
      for (const claim of claimed.claims.values()) await claim.release().catch(() => undefined);
    }
    io.stdout.write(outcomesText(outcomes, io));
    if (stopper.stopped) return EXIT.interrupted;
    return outcomes.every((outcome) => outcome.result?.status === 'finished')
      ? EXIT.ok
      : EXIT.failure;
  },
};

/**
 * The reconcile answers the plan shows and the revival records: read from stdin with
 * `--reconciled-stdin` (the web view's, for the plan it showed; runs they do not cover are
 * asked here), else asked now, before anyone confirms.
 */
async function reconcilePlan(
  plan: Parameters<typeof askReconciles>[0],
  roots: RunNode[],
  registries: Parameters<typeof askReconciles>[2],
  values: Record<string, unknown>,
  io: CommandIo,
): Promise<PlanReconciliations> {
  if (values['reconciled-stdin'] !== true) return askReconciles(plan, roots, registries);
  if (values.yes !== true) {
    throw new UserError('revive: --reconciled-stdin takes stdin, so it needs --yes');
  }
  const given = parseReconciledInput(await readBoundedText(io.stdin, 'stdin'), 'stdin');
  const asked = await askReconciles(
    { ...plan, revivals: plan.revivals.filter((revival) => !given.has(revival.node.path)) },
    roots,
    registries,
  );
  return new Map([...given, ...asked]);
}

/**
 * Salvage the damaged tails of the runs, shown and confirmed (or `--yes`) first like the
 * revival, since salvaging writes: how many were salvaged, or 'declined'.
 */
async function salvageFirst(
  roots: RunNode[],
  yes: boolean,
  io: CommandIo,
): Promise<number | 'declined'> {
  const damaged = await findSalvageable(roots);
  if (damaged.length === 0) return 0;
  io.stdout.write(salvageText(damaged));
  if (!yes) {
    if (io.stdin.isTTY !== true) {
      throw new UserError(
        'revive: stdin is not a terminal, so nobody can confirm the salvage: pass --yes (nothing was written)',
      );
    }
    if (!(await confirm(io, `Salvage ${plural(damaged.length, 'transcript')}? [y/N] `))) {
      writeLine(io.stderr, 'Declined; nothing was written.');
      return 'declined';
    }
  }
  return salvage(damaged, io);
}

async function confirm(io: CommandIo, question: string): Promise<boolean> {
  const reader = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await reader.question(question);
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    reader.close();
  }
}

function outcomesText(outcomes: RevivalOutcome[], io: CommandIo): string {
  const rows = outcomes.map((outcome) => {
    const name = safe(outcome.node.inspection.agentId ?? outcome.node.displayPath);
    if (outcome.refused !== undefined) {
      return [
        name,
        io.out.red('not revived'),
        safe(`${outcome.refused.reason}: ${outcome.refused.detail}`),
      ];
    }
    const result = outcome.result;
    if (result === undefined) return [name, io.out.red('not run'), ''];
    const state =
      result.status === 'finished' ? io.out.green('finished') : io.out.red(result.status);
    // The model's answer: cut, then made safe (the escapes may lengthen it, never unbounded).
    const text = (result.error ?? result.text).replace(/\s+/g, ' ');
    return [name, state, safe(text.length > 100 ? `${text.slice(0, 100)}…` : text)];
  });
  return `${['', io.out.bold('Revived runs:'), ...table(rows).map((line) => `  ${line}`)].join('\n')}\n`;
}
