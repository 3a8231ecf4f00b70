/**
 * The reconciles of a revive plan: for each run revived, its calls in flight whose tool (in the
 * agents module) has a `reconcile` and whose dispatch carries an idempotency key are asked what
 * became of them when the plan is made — a reconcile only looks — so that the plan shows each
 * answer, and what the model will read because of it, before anyone confirms. The revival then
 * records exactly these answers.
 *
 * @module
 */
import { toolDefinitionsOf } from '../loop/tool-set.ts';
import { escapeHtml } from '../render/escape-html.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { terminalSafe as safe } from '../render/terminal-safe.ts';
import type { Style } from '../render/terminal-style.ts';
import { Revival, type Reconciliation } from '../revival/index.ts';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import type { TreeRevivalPlan } from './tree-revival-plan.ts';

/**
 * What the reconciles of a plan answered, by the path of each revived run asked (a run with no
 * call to ask about is absent).
 *
 * @example
 * const answers: PlanReconciliations = await askReconciles(plan, roots, registries);
 * const forMain = answers.get(plan.revivals[0].node.path) ?? [];
 */
export type PlanReconciliations = ReadonlyMap<string, readonly Reconciliation[]>;

/** How many runs are asked about at once (each run's calls are asked all at once). */
const RUNS_AT_ONCE = 8;

/**
 * Ask the reconciles of the plan's revivals, given the registry of each root (as
 * `registriesFor` loads them): each bounded by the tool's timeout, never throwing (a reconcile
 * that throws or hangs answers `unknown`). Writes nothing.
 *
 * @example
 * const answers = await askReconciles(plan, roots, registries);
 */
export async function askReconciles(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  registries: ReadonlyMap<RunNode, AgentRegistry>,
): Promise<PlanReconciliations> {
  const asked = runsToReconcile(plan, roots, registries);
  const answers = new Map<string, readonly Reconciliation[]>();
  for (let start = 0; start < asked.length; start += RUNS_AT_ONCE) {
    const batch = asked.slice(start, start + RUNS_AT_ONCE);
    const replies = await Promise.all(
      batch.map(({ node, tools }) => Revival.reconcile({ path: node.path, tools })),
    );
    batch.forEach(({ node }, index) => {
      const reply = replies[index] ?? [];
      if (reply.length > 0) answers.set(node.path, reply);
    });
  }
  return answers;
}

/**
 * The plan's revived runs with a call in flight that a reconcile can be asked about, each with
 * its tools. Pure.
 */
function runsToReconcile(
  plan: TreeRevivalPlan,
  roots: RunNode[],
  registries: ReadonlyMap<RunNode, AgentRegistry>,
): { node: RunNode; tools: ReturnType<typeof toolDefinitionsOf> }[] {
  const registryOf = new Map<RunNode, AgentRegistry>();
  for (const root of roots) {
    const registry = registries.get(root);
    if (registry === undefined) continue;
    for (const node of walkTree([root])) registryOf.set(node, registry);
  }
  const runs: { node: RunNode; tools: ReturnType<typeof toolDefinitionsOf> }[] = [];
  for (const revival of plan.revivals) {
    const registry = registryOf.get(revival.node);
    const type = revival.node.inspection.agentType ?? '';
    const definition =
      registry !== undefined && Object.hasOwn(registry, type) ? registry[type] : undefined;
    if (definition === undefined) continue;
    const tools = toolDefinitionsOf(definition.tools ?? [], definition.idempotency);
    const reconciling = new Set(
      tools.filter((tool) => tool.reconcile !== undefined).map((tool) => tool.name),
    );
    const keyed = new Set(
      revival.node.inspection.openDispatches
        .filter((open) => open.idempotencyKey !== undefined)
        .map((open) => open.callId),
    );
    const asks = revival.interrupt.some(
      (call) => reconciling.has(call.toolName) && keyed.has(call.callId),
    );
    if (asks) runs.push({ node: revival.node, tools });
  }
  return runs;
}

/** How much of a completed call's output the plan shows. */
const OUTPUT_PREVIEW = 120;

/** What the model will read because of an answer, in the plan's words. */
function consequence(answer: Reconciliation): string {
  switch (answer.answer) {
    case 'completed':
      return `completed${answer.isError === true ? ' (with an error)' : ''}: the model reads its output, marked recovered after the crash — ${preview(answer.output)}`;
    case 'did-not-happen':
      return 'did not happen: the model reads that it did not take effect, NOT retried';
    default:
      return `unknown${answer.detail === undefined ? '' : ` (${answer.detail})`}: answered as interrupted, outcome unknown`;
  }
}

function preview(output: unknown): string {
  const text = (typeof output === 'string' ? output : (JSON.stringify(output) ?? '')).replace(
    /\s+/g,
    ' ',
  );
  return text.length > OUTPUT_PREVIEW ? `${text.slice(0, OUTPUT_PREVIEW - 1)}…` : text;
}

function answersInPlanOrder(
  plan: TreeRevivalPlan,
  answers: PlanReconciliations,
): { node: RunNode; answer: Reconciliation }[] {
  return plan.revivals.flatMap((revival) =>
    (answers.get(revival.node.path) ?? []).map((answer) => ({ node: revival.node, answer })),
  );
}

const HEADING = 'Reconciled: asked now, when the plan was made (a reconcile only looks)';
const FOOTER = 'what the tools answered is what the revival records; nothing is run again';

/**
 * The plan's reconcile answers for people ('' when none was asked), to print after the plan:
 * names, ids and outputs from transcripts and tools made safe for a terminal.
 *
 * @example
 * process.stdout.write(reconcilePlanText(plan, answers, style));
 */
export function reconcilePlanText(
  plan: TreeRevivalPlan,
  answers: PlanReconciliations,
  style: Style,
): string {
  const shown = answersInPlanOrder(plan, answers);
  if (shown.length === 0) return '';
  const lines = [
    style.bold(`${HEADING}:`),
    ...shown.map(
      ({ node, answer }) =>
        `  ${safe(node.inspection.agentId ?? node.displayPath)}: ${safe(answer.toolName)} ${style.dim(safe(answer.callId))} ${safe(consequence(answer))}`,
    ),
    `  ${style.dim(FOOTER)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The same, as markup of ours for the web view ('' when none was asked).
 *
 * @example
 * const html = planTableHtml(plan) + reconcilePlanHtml(plan, answers);
 */
export function reconcilePlanHtml(plan: TreeRevivalPlan, answers: PlanReconciliations): string {
  const shown = answersInPlanOrder(plan, answers);
  if (shown.length === 0) return '';
  const items = shown.map(
    ({ node, answer }) =>
      `<li data-answer="${escapeHtml(answer.answer)}">${escapeHtml(node.inspection.agentId ?? node.displayPath)}: <strong>${escapeHtml(answer.toolName)}</strong> <code>${escapeHtml(answer.callId)}</code> ${escapeHtml(consequence(answer))}</li>`,
  );
  return [
    `<div id="plan-reconcile"><p>${escapeHtml(HEADING)}:</p>`,
    `<ul>${items.join('')}</ul>`,
    `<p class="meta">${escapeHtml(FOOTER)}.</p></div>`,
  ].join('\n');
}
