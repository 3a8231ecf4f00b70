/**
 * What `revive` will do to a tree of runs, decided before anything is written: which runs
 * restart (children before parents), what each revival repairs, which runs are left alone and
 * why, and about how many tokens the restarts send. Pure.
 *
 * @module
 */
import type { RunNode } from '../render/run-node.ts';
import { walkChildrenFirst, walkTree } from '../render/run-node.ts';
import { formatCount, plural } from '../render/format-status.ts';
import { haltAdvice, haltWhy } from '../render/halt-text.ts';
import { terminalSafe as safe } from '../render/terminal-safe.ts';
import type { Style } from '../render/terminal-style.ts';
import { idempotencyLabel } from '../render/idempotency-label.ts';

/**
 * One run the plan revives.
 *
 * @example
 * for (const revival of planTreeRevival(roots).revivals) {
 *   console.log(revival.node.displayPath, revival.interrupt.map((call) => call.toolName));
 * }
 */
export interface PlannedRevival {
  node: RunNode;
  /** Calls in flight that will be answered as interrupted (never replayed). */
  interrupt: { callId: string; toolName: string; idempotency: string }[];
  /** Calls whose result is written but never settled: settled, no message. */
  settleOnly: { callId: string; toolName: string }[];
  /** Calls whose turn a compaction replaced: settled as orphaned. */
  orphaned: { callId: string; toolName: string }[];
  /** Calls never started: the revived run starts them (not a retry). */
  start: { callId: string; toolName: string }[];
  /** Joins left open for the children, with each child's state. */
  joins: { callId: string; children: { agentId: string; state: string }[] }[];
}

/**
 * A run the plan leaves alone, and why.
 *
 * @example
 * for (const { node, why } of plan.leftAlone) console.log(`${node.displayPath}: ${why}`);
 */
export interface LeftAlone {
  node: RunNode;
  why: string;
}

/**
 * The whole plan.
 *
 * @example
 * const plan: TreeRevivalPlan = planTreeRevival(await inspectTree(['runs/main.jsonl'], 3, process.cwd()));
 * process.stdout.write(planText(plan, style));
 */
export interface TreeRevivalPlan {
  /** Children before parents. */
  revivals: PlannedRevival[];
  leftAlone: LeftAlone[];
  /** Trees not touched at all because one of their runs is live. */
  blocked: LeftAlone[];
  estimatedTokens: number;
  /** The agent types of the runs to revive (an `--agents` module must define them). */
  agentTypes: string[];
}

/**
 * Plan the revival of some trees. A tree with a running run is not touched (a live process
 * owns part of it), nor one another reviver holds (named, with its pid and since when). In the others every revivable run is revived, children first; unreadable,
 * capped and empty runs are left alone (a parent waiting on one gets a failure naming it).
 *
 * @example
 * const plan = planTreeRevival(await inspectTree(paths, 3, cwd));
 */
export function planTreeRevival(roots: RunNode[]): TreeRevivalPlan {
  const plan: TreeRevivalPlan = {
    revivals: [],
    leftAlone: [],
    blocked: [],
    estimatedTokens: 0,
    agentTypes: [],
  };
  for (const root of roots) {
    const live = [...walkTree([root])].filter((node) => node.state === 'running');
    const reviver = live.find((node) => node.inspection.reviver !== undefined)?.inspection.reviver;
    if (reviver !== undefined) {
      plan.blocked.push({
        node: root,
        why: `the tree is being revived by ${
          reviver.pid === null ? 'another process (not yet named)' : `pid ${reviver.pid}`
        } since ${reviver.since ?? 'an unknown time'} (it holds the claim of ${reviver.root}); this tree is left alone`,
      });
      continue;
    }
    if (live.length > 0) {
      plan.blocked.push({
        node: root,
        why: `${live.map((node) => node.inspection.agentId ?? node.displayPath).join(', ')} ${
          live.length === 1 ? 'is' : 'are'
        } running in a live process; this tree is left alone`,
      });
      continue;
    }
    for (const node of walkChildrenFirst([root])) {
      if (node.inspection.revivable) {
        plan.revivals.push(planOne(node));
        plan.estimatedTokens += node.inspection.estimatedTokens;
        const type = node.inspection.agentType;
        if (type !== undefined && !plan.agentTypes.includes(type)) plan.agentTypes.push(type);
      } else if (node.state !== 'finished') {
        plan.leftAlone.push({ node, why: whyLeftAlone(node) });
      }
    }
  }
  return plan;
}

function planOne(node: RunNode): PlannedRevival {
  const inspection = node.inspection;
  const joinIds = new Set(inspection.pendingJoins.map((join) => join.callId));
  const planned: PlannedRevival = {
    node,
    interrupt: [],
    settleOnly: [],
    orphaned: [],
    start: inspection.neverDispatched.map((call) => ({
      callId: call.callId,
      toolName: call.toolName ?? '?',
    })),
    joins: inspection.pendingJoins.map((join) => ({
      callId: join.callId,
      children: (join.agentIds ?? []).map((agentId) => ({
        agentId,
        state:
          node.children.find((child) => child.inspection.agentId === agentId)?.state ?? 'missing',
      })),
    })),
  };
  for (const call of inspection.openDispatches) {
    if (joinIds.has(call.callId)) continue;
    const open = call;
    const toolName = call.toolName;
    if (open.turnCompacted === true) planned.orphaned.push({ callId: call.callId, toolName });
    else if (open.resultSeq !== undefined && open.resultByRevival !== true) {
      planned.settleOnly.push({ callId: call.callId, toolName });
    } else {
      planned.interrupt.push({
        callId: call.callId,
        toolName,
        idempotency: idempotencyLabel(open),
      });
    }
  }
  return planned;
}

function whyLeftAlone(node: RunNode): string {
  const detail = node.inspection.detail === undefined ? '' : ` (${node.inspection.detail})`;
  switch (node.state) {
    case 'capped':
      return `at its revival cap (${node.inspection.revivalsUsed}/${node.inspection.maxRevivals}); raise --max-revivals to revive it`;
    case 'unreadable':
      return `unreadable${detail}`;
    case 'empty':
      return 'empty: no conversation to carry on';
    default:
      return `${node.state}${detail}`;
  }
}

/**
 * The plan for people: numbered revivals with what each repairs and starts, then what is left
 * alone, then the token estimate. Paths, ids, types, tool names and reasons come from file
 * names and transcripts: each is made safe for a terminal before it is coloured.
 *
 * @example
 * process.stdout.write(planText(plan, style));
 */
export function planText(plan: TreeRevivalPlan, style: Style): string {
  const lines: string[] = [];
  for (const blocked of plan.blocked) {
    lines.push(
      `${style.yellow('Not touched:')} ${safe(blocked.node.displayPath)}: ${safe(blocked.why)}.`,
    );
  }
  if (plan.revivals.length === 0) {
    lines.push('Nothing to revive.');
  } else {
    lines.push(style.bold('Plan (children before parents):'));
    plan.revivals.forEach((revival, index) => {
      const inspection = revival.node.inspection;
      const name = inspection.agentId ?? revival.node.displayPath;
      lines.push(
        `  ${index + 1}. revive ${style.bold(safe(name))}${
          inspection.agentType === undefined ? '' : ` (${safe(inspection.agentType)})`
        }  ${style.dim(safe(revival.node.displayPath))}`,
      );
      const halt = inspection.halt;
      if (halt !== undefined) {
        lines.push(
          `       it ${halt.state} at ${safe(halt.at)}: ${safe(haltWhy(halt))} — ${safe(haltAdvice(halt))}`,
        );
      }
      for (const call of revival.interrupt) {
        lines.push(
          `       answer ${safe(call.toolName)} ${style.dim(safe(call.callId))} (${safe(call.idempotency)}) as interrupted, outcome unknown — NOT retried`,
        );
      }
      for (const call of revival.settleOnly) {
        lines.push(
          `       settle ${safe(call.toolName)} ${style.dim(safe(call.callId))}: its result was written, only the settle was lost`,
        );
      }
      for (const call of revival.orphaned) {
        lines.push(
          `       settle ${safe(call.toolName)} ${style.dim(safe(call.callId))} as orphaned (a compaction replaced its turn)`,
        );
      }
      for (const join of revival.joins) {
        const children = join.children
          .map((child) => `${safe(child.agentId)} (${childNote(child.state)})`)
          .join(', ');
        lines.push(
          `       keep task_wait ${style.dim(safe(join.callId))} open for ${children || 'its children'}`,
        );
      }
      for (const call of revival.start) {
        lines.push(
          `       start ${safe(call.toolName)} ${style.dim(safe(call.callId))}: asked for, never started`,
        );
      }
      lines.push(
        `       tell it it was resumed, count revival ${inspection.revivalsUsed + 1} of ${
          inspection.maxRevivals
        }, run it: about ${formatCount(inspection.estimatedTokens)} tokens`,
      );
    });
  }
  for (const left of plan.leftAlone) {
    lines.push(
      `${style.yellow('Left alone:')} ${safe(left.node.inspection.agentId ?? left.node.displayPath)}: ${safe(left.why)}.`,
    );
  }
  if (plan.revivals.length > 0) {
    lines.push(
      `Total: ${plural(plan.revivals.length, 'run')} to revive, about ${formatCount(
        plan.estimatedTokens,
      )} tokens to resume them (more as they work).`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function childNote(state: string): string {
  switch (state) {
    case 'finished':
      return 'finished: answered from its transcript';
    case 'revivable':
    case 'failed':
    case 'stopped':
      return 'revived above';
    case 'missing':
      return 'no transcript found';
    default:
      return `${state}: answered as a failure`;
  }
}
