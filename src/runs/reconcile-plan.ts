/**
 * Which calls of a revive plan will be reconciled: for each run revived, the calls in flight
 * whose tool (in the agents module) has a `reconcile` and whose dispatch carries an idempotency
 * key. Their tools are asked only once the plan is confirmed and the tree claimed, so the plan
 * says what may happen to each, not what was answered.
 *
 * @module
 */
import { toolDefinitionsOf } from '../loop/tool-set.ts';
import { escapeHtml } from '../render/escape-html.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { terminalSafe as safe } from '../render/terminal-safe.ts';
import type { Style } from '../render/terminal-style.ts';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import type { TreeRevivalPlan } from './tree-revival-plan.ts';

/**
 * A call in flight whose tool will be asked what became of it.
 *
 * @example
 * const asked: CallToReconcile = { node, callId: 'call-1', toolName: 'charge' };
 */
export interface CallToReconcile {
  node: RunNode;
  callId: string;
  toolName: string;
}

/**
 * The calls of the plan's revivals that a reconcile will be asked about, given the registry of
 * each root (as `registriesFor` loads them). Pure.
 *
 * @example
 * const asked = callsToReconcileInPlan(plan, roots, registries);
 */
export function callsToReconcileInPlan(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  registries: ReadonlyMap<RunNode, AgentRegistry>,
): CallToReconcile[] {
  const registryOf = new Map<RunNode, AgentRegistry>();
  for (const root of roots) {
    const registry = registries.get(root);
    if (registry === undefined) continue;
    for (const node of walkTree([root])) registryOf.set(node, registry);
  }
  const asked: CallToReconcile[] = [];
  for (const revival of plan.revivals) {
    const registry = registryOf.get(revival.node);
    const type = revival.node.inspection.agentType ?? '';
    const definition =
      registry !== undefined && Object.hasOwn(registry, type) ? registry[type] : undefined;
    if (definition === undefined) continue;
    const reconciling = new Set(
      toolDefinitionsOf(definition.tools ?? [], definition.idempotency)
        .filter((tool) => tool.reconcile !== undefined)
        .map((tool) => tool.name),
    );
    const keyed = new Set(
      revival.node.inspection.openDispatches
        .filter((open) => open.idempotencyKey !== undefined)
        .map((open) => open.callId),
    );
    for (const call of revival.interrupt) {
      if (!reconciling.has(call.toolName) || !keyed.has(call.callId)) continue;
      asked.push({ node: revival.node, callId: call.callId, toolName: call.toolName });
    }
  }
  return asked;
}

const OUTCOMES =
  'completed → its output, marked recovered; did not happen → said so, NOT retried; anything else (unknown, an error, no answer in time) → interrupted, outcome unknown';

/**
 * The plan's reconcile lines for people ('' when no call will be asked), to print after the
 * plan: names from transcripts made safe for a terminal.
 *
 * @example
 * process.stdout.write(reconcilePlanText(asked, style));
 */
export function reconcilePlanText(asked: CallToReconcile[], style: Style): string {
  if (asked.length === 0) return '';
  const lines = [
    style.bold('Reconcile, once you confirm (nothing is asked before):'),
    ...asked.map(
      (call) =>
        `  ${safe(call.node.inspection.agentId ?? call.node.displayPath)}: ask ${safe(call.toolName)}'s reconcile about ${style.dim(safe(call.callId))} instead of answering it as interrupted outright`,
    ),
    `  ${style.dim(OUTCOMES)}; nothing is run again`,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The same, as markup of ours for the web view ('' when no call will be asked).
 *
 * @example
 * const html = planTableHtml(plan) + reconcilePlanHtml(asked);
 */
export function reconcilePlanHtml(asked: CallToReconcile[]): string {
  if (asked.length === 0) return '';
  const items = asked.map(
    (call) =>
      `<li>${escapeHtml(call.node.inspection.agentId ?? call.node.displayPath)}: <strong>${escapeHtml(call.toolName)}</strong> <code>${escapeHtml(call.callId)}</code></li>`,
  );
  return [
    '<div id="plan-reconcile"><p>Reconcile, once you confirm (nothing is asked before): these calls in flight have a tool that can check what became of them.</p>',
    `<ul>${items.join('')}</ul>`,
    `<p class="meta">${escapeHtml(OUTCOMES)}; nothing is run again.</p></div>`,
  ].join('\n');
}
