import { approveRuns } from './approve-runs.ts';
import { connectStore, databaseUrl } from './database-store.ts';
import { createInterface } from 'node:readline/promises';
import { Loop } from '../loop/loop.ts';
import type { RunHandle, RunResult } from '../loop/types.ts';
import { Revival, type TreeClaim } from '../revival/index.ts';
import { type AgentRegistry, backendsOf } from '../subagents/agent-definition.ts';
import { resolveModelSpec } from '../subagents/model-spec.ts';
import { readSessionMeta } from '../subagents/child-transcript.ts';
import { Composer } from '../subagents/composer.ts';
import {
  type Command,
  type CommandIo,
  integerOption,
  parseCommandLine,
  writeLine,
} from './command.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { findTranscripts } from './find-transcripts.ts';
import { formatCount, plural, quote, table } from './format-status.ts';
import { loadAgents } from './load-agents.ts';
import {
  type PlannedRevival,
  planTreeRevival,
  planText,
  type TreeRevivalPlan,
} from './tree-revival-plan.ts';
import { asUserError } from './run-command.ts';
import { followRun } from './run-progress.ts';
import { RunStopper } from './run-stopper.ts';
import { findSalvageable, salvage, salvageText } from './salvage-damaged.ts';
import { inspectTree, type RunNode, walkTree } from './inspect-tree.ts';
import { terminalSafe as safe } from './terminal-safe.ts';
import { DEFAULT_MAX_REVIVALS } from './status-command.ts';
import { UserError } from './user-error.ts';
import { checkJoinedChildren, findTreeRoot } from '../revival/tree-root.ts';
import { nodeFileSystem } from '../transcript/file-system.ts';
import { createStyle } from './terminal-style.ts';

/** The plan compared without colour: the same plan whatever the terminal. */
const PLAIN = createStyle(false);

/**
 * The model spec the demo's transcripts record: such runs can be revived without `--agents`.
 *
 * @example
 * const isDemoRun = (await readSessionMeta(path))?.model === DEMO_MODEL_SPEC;
 */
export const DEMO_MODEL_SPEC = 'llm-agent-scripted:demo-script';

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
       llm-agent revive --database URL [--schema NAME] [--yes] RUN…

Revive the interrupted runs recorded at PATH (a transcript with its children, or a folder)
and run them to the end, children before parents:

  1. plan: which runs restart, what each revival repairs (calls in flight are answered
     as interrupted, outcome unknown, NOT retried; joins stay open for the children),
     which runs are left alone and why, and about how many tokens resuming sends;
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
        throw new UserError(
          'revive: give the RUNs to approve (see llm-agent status --database URL)',
        );
      }
      const store = await connectStore('revive', url, values.schema as string | undefined);
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
      // Salvaging writes: it is shown and confirmed (or --yes) first, like the revival.
      const damaged = await findSalvageable(roots);
      if (damaged.length > 0) {
        io.stdout.write(salvageText(damaged));
        if (values.yes !== true) {
          if (io.stdin.isTTY !== true) {
            throw new UserError(
              'revive: stdin is not a terminal, so nobody can confirm the salvage: pass --yes (nothing was written)',
            );
          }
          if (!(await confirm(io, `Salvage ${plural(damaged.length, 'transcript')}? [y/N] `))) {
            writeLine(io.stderr, 'Declined; nothing was written.');
            return EXIT.declined;
          }
        }
        if ((await salvage(damaged, io)) > 0) {
          roots = await inspectTree(paths, maxRevivals, io.cwd);
        }
      }
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
    const registries = await registriesFor(plan, roots, values.agents as string | undefined, io);
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
    const stopper = new RunStopper(io, `llm-agent ${['revive', ...argv].map(quote).join(' ')}`);
    let outcomes: RevivalOutcome[];
    try {
      outcomes = await executePlan(
        plan,
        roots,
        registries,
        maxRevivals,
        io,
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
 * How one planned revival went.
 *
 * @example
 * const outcomes: RevivalOutcome[] = await executePlan(plan, roots, registries, 3, io, stopper);
 * const unfinished = outcomes.filter((outcome) => outcome.result?.status !== 'finished');
 */
export interface RevivalOutcome {
  node: RunNode;
  /** Set when `Revival.revive` refused. */
  refused?: { reason: string; detail: string };
  /** Set when the revived run ended. */
  result?: RunResult;
  revival?: number;
}

/**
 * The registry for each root that has something to revive: from `--agents`, or — for the
 * demo's own transcripts only — the demo's agents. Every agent type to revive must be defined:
 * checked here, before anything is written.
 */
async function registriesFor(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  module: string | undefined,
  io: CommandIo,
): Promise<Map<RunNode, AgentRegistry>> {
  const registries = new Map<RunNode, AgentRegistry>();
  for (const root of roots) {
    const revivals = plan.revivals.filter((revival) =>
      [...walkTree([root])].includes(revival.node),
    );
    if (revivals.length === 0) continue;
    let registry: AgentRegistry;
    let source: string;
    if (module !== undefined) {
      registry = await loadAgents(module, { transcript: root.path, cwd: io.cwd, env: io.env });
      source = module;
    } else if (await allDemoRuns(revivals)) {
      const demo = await import('../demo/demo-agents.ts');
      registry = demo.default({ transcript: root.path, cwd: io.cwd, env: io.env });
      source = 'the demo agents';
    } else {
      throw new UserError(
        `revive: --agents MODULE is needed to run the revived runs (agent types: ${plan.agentTypes.join(', ')}); see llm-agent revive --help`,
      );
    }
    for (const revival of revivals) {
      const type = revival.node.inspection.agentType;
      const definition = type === undefined ? undefined : registry[type];
      if (type === undefined || !Object.hasOwn(registry, type) || definition === undefined) {
        throw new UserError(
          `${source}: no agent type "${type ?? '?'}" for ${revival.node.displayPath} (it defines: ${Object.keys(registry).join(', ')})`,
        );
      }
      // A model that cannot be used (a missing key) is found before anything is written.
      try {
        backendsOf(definition, (spec) => resolveModelSpec(spec, io.env));
      } catch (error) {
        throw new UserError(`${source}: agent type "${type}": ${(error as Error).message}`);
      }
    }
    registries.set(root, registry);
  }
  return registries;
}

/** The reviver holding the tree of a blocked root, as its inspection found it, or null. */
function claimedTree(root: RunNode): NonNullable<RunNode['inspection']['reviver']> | null {
  for (const node of walkTree([root])) {
    if (node.inspection.reviver !== undefined) return node.inspection.reviver;
  }
  return null;
}

type ClaimOutcome =
  | { ok: true; claims: Map<RunNode, TreeClaim> }
  | { ok: false; code: ExitCode; message: string };

/**
 * Validate, then commit: claim the tree of every root with something to revive (its real root,
 * found by checking every parent link up from it), check every parent link and joined child of
 * the runs to revive, and make the plan again under the claims — it must be the plan shown.
 * Any refusal releases what was claimed, and nothing has been written.
 */
async function claimTrees(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  registries: Map<RunNode, AgentRegistry>,
  paths: string[],
  maxRevivals: number,
  io: CommandIo,
): Promise<ClaimOutcome> {
  const claims = new Map<RunNode, TreeClaim>();
  const byRoot = new Map<string, TreeClaim>();
  const refuse = async (code: ExitCode, message: string): Promise<ClaimOutcome> => {
    for (const claim of byRoot.values()) await claim.release().catch(() => undefined);
    return { ok: false, code, message };
  };
  for (const root of roots) {
    if (!registries.has(root)) continue;
    const tree = await findTreeRoot(root.path, nodeFileSystem);
    if (!tree.ok) return refuse(EXIT.unreadable, `revive: ${tree.detail}; nothing was written`);
    let claim = byRoot.get(tree.root);
    if (claim === undefined) {
      const claimed = await Revival.claimTree({ path: tree.root });
      if (!claimed.ok) {
        return refuse(
          claimed.reason === 'running' ? EXIT.claimed : EXIT.failure,
          `revive: ${claimed.detail}; nothing was written`,
        );
      }
      claim = claimed.claim;
      byRoot.set(tree.root, claim);
    }
    claims.set(root, claim);
  }
  for (const revival of plan.revivals) {
    const tree = await findTreeRoot(revival.node.path, nodeFileSystem);
    if (!tree.ok) return refuse(EXIT.unreadable, `revive: ${tree.detail}; nothing was written`);
    const joined = await checkJoinedChildren(
      revival.node.path,
      revival.joins.flatMap((join) => join.children.map((child) => child.agentId)),
      nodeFileSystem,
    );
    if (joined !== null) return refuse(EXIT.unreadable, `revive: ${joined}; nothing was written`);
  }
  const again = planTreeRevival(
    await inspectTree(paths, maxRevivals, io.cwd, { treeClaims: [...byRoot.values()] }),
  );
  if (planText(again, PLAIN) !== planText(plan, PLAIN)) {
    return refuse(
      EXIT.claimed,
      'revive: the runs changed after the plan was made (another process revived or ran them); nothing was written — look again with llm-agent status',
    );
  }
  return { ok: true, claims };
}

async function allDemoRuns(revivals: PlannedRevival[]): Promise<boolean> {
  for (const revival of revivals) {
    const meta = await readSessionMeta(revival.node.path);
    if (meta?.model !== DEMO_MODEL_SPEC) return false;
  }
  return true;
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

/**
 * Revive and run every planned run, tree by tree, children first: one composer per tree, so a
 * revived child is tracked where its revived parent's pending join looks for it. Runs the
 * plan leaves alone are reported to the composer, so a join waiting on one answers with the
 * reason instead of waiting for ever.
 *
 * @example
 * const outcomes = await executePlan(plan, roots, registries, 3, io, stopper);
 */
export async function executePlan(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  registries: Map<RunNode, AgentRegistry>,
  maxRevivals: number,
  io: CommandIo,
  stopper?: RunStopper,
  claims?: Map<RunNode, TreeClaim>,
): Promise<RevivalOutcome[]> {
  const outcomes: RevivalOutcome[] = [];
  for (const root of roots) {
    const registry = registries.get(root);
    if (registry === undefined) continue;
    const inTree = new Set(walkTree([root]));
    const followers: Promise<void>[] = [];
    const composer = new Composer({
      registry,
      createLoop: (options) => new Loop(options),
      resolveModel: (spec) => resolveModelSpec(spec, io.env),
      onEvent: (event) => {
        if (event.type !== 'child-start') return;
        io.stderr.write(
          `${io.err.dim(`[${safe(event.child.agentId)}]`)} ${event.revived ? 'running again under its own id' : `started (${safe(event.child.agentType)}, "${safe(event.child.label)}")`}\n`,
        );
        stopper?.add(event.run);
        followers.push(followRun(event.child.agentId, event.run, io.stderr, io.err));
      },
    });
    for (const left of plan.leftAlone) {
      if (!inTree.has(left.node)) continue;
      composer.reportUnrevivable({
        sessionPath: left.node.path,
        reason: left.node.state,
        detail: left.why,
      });
    }
    const runs: { outcome: RevivalOutcome; run: RunHandle }[] = [];
    for (const revival of plan.revivals) {
      if (!inTree.has(revival.node)) continue;
      if (stopper?.stopped === true) break;
      const node = revival.node;
      const name = node.inspection.agentId ?? node.displayPath;
      const outcome: RevivalOutcome = { node };
      outcomes.push(outcome);
      const treeClaim = claims?.get(root);
      const revived = await Revival.revive({
        path: node.path,
        agentId: node.inspection.agentId ?? '',
        maxRevivals,
        ...(treeClaim === undefined ? {} : { treeClaim }),
      });
      if (!revived.ok) {
        outcome.refused = { reason: revived.reason, detail: revived.detail };
        io.stderr.write(
          `${io.err.dim(`[${safe(name)}]`)} ${io.err.red('not revived')}: ${safe(`${revived.reason}: ${revived.detail}`)}\n`,
        );
        composer.reportUnrevivable({
          sessionPath: node.path,
          reason: revived.reason,
          detail: revived.detail,
        });
        continue;
      }
      outcome.revival = revived.revival.ordinal;
      io.stderr.write(
        `${io.err.dim(`[${safe(name)}]`)} revived (revival ${revived.revival.ordinal} of ${maxRevivals})${
          revived.interrupted.length === 0
            ? ''
            : `: ${plural(revived.interrupted.length, 'call')} answered as interrupted`
        }\n`,
      );
      try {
        const started = await composer.resume({
          session: revived.session,
          messages: revived.messages,
        });
        runs.push({ outcome, run: started.run });
        stopper?.add(started.run);
        if (node.inspection.parent === undefined) {
          followers.push(followRun(name, started.run, io.stderr, io.err));
        }
      } catch (error) {
        await revived.session.close().catch(() => undefined);
        throw asUserError(node.displayPath, error);
      }
    }
    for (const { outcome, run } of runs) outcome.result = await run;
    await composer.idle();
    await Promise.all(followers);
  }
  return outcomes;
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
