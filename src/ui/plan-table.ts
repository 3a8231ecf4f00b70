/**
 * The revive plan as the page shows it: a table of the runs it revives, children first — the
 * run, what each of its calls will be answered, and the tokens resuming it sends — folded when
 * long, each row filtered with the tree by its run's state. The text `revive` prints stays
 * beside it, folded.
 *
 * @module
 */
import { escapeHtml } from '../render/escape-html.ts';
import { formatCount } from '../render/format-status.ts';
import type { PlannedRevival, TreeRevivalPlan } from '../runs/tree-revival-plan.ts';

/** More rows than this start folded. */
const OPEN_ROWS = 12;

/**
 * The plan's table, as markup of ours (every name from a transcript escaped); empty when
 * nothing is to be revived.
 *
 * @example
 * const html = planTableHtml(planTreeRevival(roots));
 */
export function planTableHtml(plan: TreeRevivalPlan): string {
  if (plan.revivals.length === 0) return '';
  const rows = plan.revivals.map((revival, index) => planRow(revival, index + 1));
  const left = [...plan.blocked, ...plan.leftAlone].map(
    (entry) =>
      `<li>${escapeHtml(entry.node.inspection.agentId ?? entry.node.displayPath)}: ${escapeHtml(entry.why)}</li>`,
  );
  const runs = `${plan.revivals.length} run${plan.revivals.length === 1 ? '' : 's'}`;
  return [
    `<details id="plan-table"${rows.length <= OPEN_ROWS ? ' open' : ''}>`,
    `<summary>Plan: ${runs} to revive, children first, about ${formatCount(plan.estimatedTokens)} tokens to resume them</summary>`,
    '<table class="plan"><thead><tr><th>#</th><th>run</th><th>what each call will be answered</th><th>tokens</th></tr></thead>',
    `<tbody>\n${rows.join('\n')}\n</tbody></table>`,
    left.length === 0 ? '' : `<p>Not revived:</p><ul class="left">${left.join('')}</ul>`,
    '</details>',
  ].join('\n');
}

function planRow(revival: PlannedRevival, number: number): string {
  const node = revival.node;
  const inspection = node.inspection;
  const name = inspection.agentId ?? node.displayPath;
  const type = inspection.agentType === undefined ? '' : ` (${escapeHtml(inspection.agentType)})`;
  const call = (toolName: string, callId: string, what: string): string =>
    `<li><strong>${escapeHtml(toolName)}</strong> <code>${escapeHtml(callId)}</code>: ${what}</li>`;
  const answers = [
    ...revival.interrupt.map((c) =>
      call(
        c.toolName,
        c.callId,
        `<span class="warn">interrupted, outcome unknown — NOT retried</span> (${escapeHtml(c.idempotency)})`,
      ),
    ),
    ...revival.settleOnly.map((c) => call(c.toolName, c.callId, 'settled: its result was written')),
    ...revival.orphaned.map((c) => call(c.toolName, c.callId, 'settled as orphaned')),
    ...revival.joins.map((join) =>
      call(
        'task_wait',
        join.callId,
        `kept open for ${escapeHtml(join.children.map((child) => child.agentId).join(', ') || 'its children')}`,
      ),
    ),
    ...revival.start.map((c) => call(c.toolName, c.callId, 'started (asked for, never started)')),
  ];
  return [
    `<tr class="plan-run state-${node.state}">`,
    `<td>${number}</td>`,
    `<td><a href="run?path=${encodeURIComponent(node.path)}">${escapeHtml(name)}</a>${type}<br><span class="meta">revival ${inspection.revivalsUsed + 1} of ${inspection.maxRevivals}</span></td>`,
    `<td>${answers.length === 0 ? '<span class="meta">no call to answer: told it was resumed</span>' : `<ul>${answers.join('')}</ul>`}</td>`,
    `<td class="n">${formatCount(inspection.estimatedTokens)}</td>`,
    '</tr>',
  ].join('');
}
