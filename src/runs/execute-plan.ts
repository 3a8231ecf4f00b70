/**
 * Executing a tree revival: the registries its runs need, claiming their trees (validate, then
 * commit) and reviving and running every planned run, children first.
 *
 * @module
 */
import { Loop } from '../loop/loop.ts';
import type { RunHandle, RunResult } from '../loop/types.ts';
import { EXIT, type ExitCode } from '../render/exit-codes.ts';
import { plural } from '../render/format-status.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { followRun } from '../render/run-progress.ts';
import { terminalSafe as safe } from '../render/terminal-safe.ts';
import { createStyle } from '../render/terminal-style.ts';
import { Revival, type TreeClaim } from '../revival/index.ts';
import { claimFoundTree } from '../revival/claim-found-tree.ts';
import { checkJoinedChildren, findTreeRoot } from '../revival/tree-root.ts';
import { VerifiedUnderClaim } from '../revival/verified-under-claim.ts';
import { type AgentRegistry, backendsOf } from '../subagents/agent-definition.ts';
import { Composer } from '../subagents/composer.ts';
import { resolveModelSpec } from '../subagents/model-spec.ts';
import { nodeFileSystem } from '../transcript/file-system.ts';
import { type CommandIo, hintCommand } from './command-io.ts';
import { inspectTree } from './inspect-tree.ts';
import { allDemoRuns } from './demo-runs.ts';
import { type AgentsContext, loadAgents } from './load-agents.ts';
import type { PlanReconciliations } from './reconcile-plan.ts';
import type { RunStopper } from './run-stopper.ts';
import { planText, planTreeRevival, type TreeRevivalPlan } from './tree-revival-plan.ts';
import { asUserError, UserError } from './user-error.ts';

/** The plan compared without colour: the same plan whatever the terminal. */
const PLAIN = createStyle(false);

/**
 * How one planned revival went.
 *
 * @example
 * const outcomes: RevivalOutcome[] = await executePlan(plan, roots, registries, 3, io, answers);
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
 * checked here, before anything is written. `demoAgents` loads the demo's agents (the
 * application's: this layer knows no demo).
 *
 * @example
 * const registries = await registriesFor(plan, roots, 'agents.ts', io, async () => demoAgents);
 */
export async function registriesFor(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  module: string | undefined,
  io: CommandIo,
  demoAgents: () => Promise<(context: AgentsContext) => AgentRegistry>,
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
      const demo = await demoAgents();
      registry = demo({ transcript: root.path, cwd: io.cwd, env: io.env });
      source = 'the demo agents';
    } else {
      throw new UserError(
        `revive: --agents MODULE is needed to run the revived runs (agent types: ${plan.agentTypes.join(', ')}); see ${hintCommand(io, 'revive --help')}`,
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

/**
 * The reviver holding the tree of a blocked root, as its inspection found it, or null.
 *
 * @example
 * if (plan.blocked.some((blocked) => claimedTree(blocked.node) !== null)) return EXIT.claimed;
 */
export function claimedTree(root: RunNode): NonNullable<RunNode['inspection']['reviver']> | null {
  for (const node of walkTree([root])) {
    if (node.inspection.reviver !== undefined) return node.inspection.reviver;
  }
  return null;
}

/**
 * The claims {@link claimTrees} took, one per root to revive, or why it refused (and released
 * what it had claimed).
 *
 * @example
 * const claimed: ClaimOutcome = await claimTrees(plan, roots, registries, paths, 3, io);
 */
export type ClaimOutcome =
  | { ok: true; claims: Map<RunNode, TreeClaim> }
  | { ok: false; code: ExitCode; message: string };

/**
 * Validate, then commit: claim the tree of every root with something to revive (its real root,
 * found by checking every parent link up from it), check every parent link and joined child of
 * the runs to revive, and make the plan again under the claims — it must be the plan shown.
 * Any refusal releases what was claimed, and nothing has been written.
 *
 * @example
 * const claimed = await claimTrees(plan, roots, registries, ['runs'], 3, io);
 * if (!claimed.ok) return claimed.code;
 */
export async function claimTrees(
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
  // Each run's tree of a claim: what was checked under the claim is carried with it.
  const claimOf = new Map<RunNode, TreeClaim>();
  for (const root of roots) {
    if (!registries.has(root)) continue;
    const tree = await findTreeRoot(root.path, nodeFileSystem);
    if (!tree.ok) return refuse(EXIT.unreadable, `revive: ${tree.detail}; nothing was written`);
    let claim = byRoot.get(tree.root);
    if (claim === undefined) {
      const claimed = await claimFoundTree(root.path, tree, nodeFileSystem, () => new Date());
      if (!claimed.ok) {
        return refuse(
          claimed.reason === 'running' ? EXIT.claimed : EXIT.failure,
          `revive: ${claimed.detail}; nothing was written`,
        );
      }
      claim = claimed.claim;
      byRoot.set(tree.root, claim);
    }
    VerifiedUnderClaim.of(claim).rememberRoot(root.path, tree);
    claims.set(root, claim);
    for (const node of walkTree([root])) claimOf.set(node, claim);
  }
  for (const revival of plan.revivals) {
    const claim = claimOf.get(revival.node);
    const verified = claim === undefined ? null : VerifiedUnderClaim.of(claim);
    const path = revival.node.path;
    const tree =
      verified === null
        ? await findTreeRoot(path, nodeFileSystem)
        : await verified.treeRoot(path, nodeFileSystem);
    if (!tree.ok) return refuse(EXIT.unreadable, `revive: ${tree.detail}; nothing was written`);
    const children = revival.joins.flatMap((join) => join.children.map((child) => child.agentId));
    const joined =
      verified === null
        ? await checkJoinedChildren(path, children, nodeFileSystem)
        : await verified.joinedChildren(path, children, nodeFileSystem);
    if (joined !== null) return refuse(EXIT.unreadable, `revive: ${joined}; nothing was written`);
  }
  const again = planTreeRevival(
    await inspectTree(paths, maxRevivals, io.cwd, { treeClaims: [...byRoot.values()] }),
  );
  if (planText(again, PLAIN) !== planText(plan, PLAIN)) {
    return refuse(
      EXIT.claimed,
      `revive: the runs changed after the plan was made (another process revived or ran them); nothing was written — look again with ${hintCommand(io, 'status')}`,
    );
  }
  return { ok: true, claims };
}

/**
 * Revive and run every planned run, tree by tree, children first: one composer per tree, so a
 * revived child is tracked where its revived parent's pending join looks for it. Runs the
 * plan leaves alone are reported to the composer, so a join waiting on one answers with the
 * reason instead of waiting for ever. Each run's calls in flight are settled by the reconcile
 * answers the plan showed (`reconciliations`, by path), the rest as interrupted.
 *
 * @example
 * const answers = await askReconciles(plan, roots, registries);
 * const outcomes = await executePlan(plan, roots, registries, 3, io, answers, stopper);
 */
export async function executePlan(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  registries: Map<RunNode, AgentRegistry>,
  maxRevivals: number,
  io: CommandIo,
  reconciliations: PlanReconciliations,
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
      // What the tools said of their calls in flight when the plan was made; nothing re-runs.
      const reconciled = [...(reconciliations.get(node.path) ?? [])];
      for (const asked of reconciled) {
        io.stderr.write(
          `${io.err.dim(`[${safe(name)}]`)} reconcile of ${safe(asked.toolName)} ${safe(asked.callId)}: ${safe(asked.answer)}${asked.detail === undefined ? '' : ` (${safe(asked.detail)})`}\n`,
        );
      }
      const revived = await Revival.revive({
        path: node.path,
        agentId: node.inspection.agentId ?? '',
        maxRevivals,
        reconciled,
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
      if (revived.unfollowedLink !== undefined) {
        io.stderr.write(`${io.err.dim(`[${safe(name)}]`)} ${safe(revived.unfollowedLink)}\n`);
      }
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
