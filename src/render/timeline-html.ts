/**
 * A run's timeline ({@link runTimeline}) as HTML: one row per step — what it was, when it
 * started, a bar as long as it took, its duration and its tokens — and the revivals, failures
 * and death between them, each row linking to its turn in the conversation.
 *
 * @module
 */
import { escapeHtml } from './escape-html.ts';
import { formatCount } from './format-status.ts';
import type { RunTimeline, TimelineMark, TimelineStep } from './run-timeline.ts';
import { timeHtml } from './time-html.ts';

/**
 * The style of {@link timelineHtml}'s markup, for the page's style sheet.
 *
 * @example
 * const style = `<style>${TIMELINE_STYLE}</style>`;
 */
export const TIMELINE_STYLE = `
.timeline{margin:.6rem 0;border:1px solid #dee2e6;border-radius:.3rem;background:#fff}
.timeline>summary{padding:.3rem .6rem;font-weight:600;color:#1d1d1f}
.timeline .meta{margin:.2rem .6rem}
ol.steps{list-style:none;margin:0;padding:.2rem .6rem .4rem;max-height:24rem;overflow:auto;font-size:12.5px}
ol.steps li{display:grid;grid-template-columns:2.2rem 9rem 6.2rem 1fr 5.5rem 5rem;gap:.5rem;align-items:center;padding:.1rem 0;border-bottom:1px solid #f1f3f5}
ol.steps .n{color:#999;text-align:right}ol.steps .d,ol.steps .t{text-align:right;white-space:nowrap}ol.steps .w{color:#777;white-space:nowrap}
ol.steps .k{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.track{background:#f1f3f5;height:.7rem;border-radius:.2rem}.bar{display:block;height:100%;min-width:2px;border-radius:.2rem;background:#adb5bd}
.step-model .bar{background:#1971c2}.step-tool .bar{background:#e8a400}.step-input .bar{background:#2b8a3e}.step-system .bar{background:#9c36b5}
.st-interrupted .bar,.st-failed .bar{background:#c92a2a}.st-in-flight .bar{background:repeating-linear-gradient(45deg,#e8590c 0 4px,#ffd8a8 4px 8px);width:100%}
.st-interrupted .k::after{content:" ✕ interrupted";color:#c92a2a}.st-in-flight .k::after{content:" … in flight";color:#e8590c}
ol.steps li.mark{display:block;border-bottom:0;padding:.25rem .4rem;margin:.2rem 0;border-radius:.2rem;font-weight:600}
.mark-revived{background:#fff5f5;border:1px dashed #c92a2a;color:#c92a2a}.mark-died{background:#c92a2a;color:#fff}.mark-died a{color:#fff}
.mark-failed,.mark-stopped{background:#fff4e6;color:#d9480f}.mark-compaction{background:#f8f0fc;color:#862e9c}
`;

/**
 * Which part of the timeline a page shows: the steps of the messages it holds (seq
 * `fromSeq`…`toSeq`; a paged conversation shows its page's), linking each to its message
 * (`#ANCHOR-mSEQ`), and the run's death to where it stopped (`#ANCHOR-stopped`).
 *
 * @example
 * const window: TimelineWindow = { fromSeq: 0, toSeq: Number.POSITIVE_INFINITY, paged: false, anchor: 'run-0' };
 */
export interface TimelineWindow {
  fromSeq: number;
  toSeq: number;
  /** The conversation is paged: the totals are the run's, the rows this page's. */
  paged: boolean;
  /** The run's section's anchor: a message's is `ANCHOR-mSEQ`, the run's end `ANCHOR-stopped`. */
  anchor: string;
}

/**
 * The timeline of a run (its totals, then a row per step and mark in the window), folded
 * open in a `<details>`; empty when the run has no step.
 *
 * @example
 * const html = timelineHtml(runTimeline(records, false), { fromSeq: 0, toSeq: Infinity, paged: false, anchor: 'run-0' });
 */
export function timelineHtml(timeline: RunTimeline, window: TimelineWindow): string {
  if (timeline.entries.length === 0) return '';
  const shown = timeline.entries.filter(
    (entry) => entry.seq >= window.fromSeq && entry.seq <= window.toSeq,
  );
  const longest = shown.reduce(
    (most, entry) => (entry.type === 'step' ? Math.max(most, entry.durationMs ?? 0) : most),
    1,
  );
  const first = timeline.entries.indexOf(shown[0] as TimelineStep | TimelineMark);
  let number = 0;
  for (let index = 0; index < first; index += 1) {
    if (timeline.entries[index]?.type === 'step') number += 1;
  }
  const rows = shown.map((entry) => {
    if (entry.type === 'mark') return markRow(entry, window.anchor);
    number += 1;
    return stepRow(entry, number, longest, window.anchor);
  });
  const tokens = timeline.estimated
    ? `about ${formatCount(timeline.tokens)} tokens (estimated as characters ÷ 4 where the transcript records no provider usage)`
    : `${formatCount(timeline.tokens)} tokens (as the provider counted them)`;
  const facts = [
    `${timeline.steps} step${timeline.steps === 1 ? '' : 's'}`,
    timeline.spanMs === undefined ? '' : `over ${formatDuration(timeline.spanMs)}`,
    tokens,
    timeline.revivals === 0
      ? ''
      : `${timeline.revivals} revival${timeline.revivals === 1 ? '' : 's'}`,
  ].filter((fact) => fact !== '');
  return [
    '<details class="timeline" open><summary>Timeline</summary>',
    `<p class="meta">${facts.join(' · ')}${window.paged ? ` — the rows below are this page's (seq ${window.fromSeq}–${window.toSeq})` : ''}</p>`,
    `<ol class="steps">${rows.join('')}</ol>`,
    '</details>',
  ].join('\n');
}

function stepRow(step: TimelineStep, number: number, longest: number, anchor: string): string {
  const status = step.status === undefined ? '' : ` st-${step.status.replace(' ', '-')}`;
  const width =
    step.durationMs === undefined ? 0 : Math.max(0.5, (step.durationMs / longest) * 100);
  const bar =
    step.status === 'in flight'
      ? '<span class="bar"></span>'
      : `<span class="bar" style="width:${width.toFixed(1)}%"></span>`;
  const what =
    step.kind === 'tool'
      ? `→ ${escapeHtml(step.label)}`
      : step.kind === 'model'
        ? 'model turn'
        : escapeHtml(step.label);
  const tokens =
    step.status === 'in flight'
      ? '<span class="t"></span>'
      : step.tokensFrom === 'estimate'
        ? `<span class="t">≈${formatCount(step.tokens)} tok</span>`
        : `<span class="t">${formatCount(step.tokens)} tok</span>`;
  return `<li class="step step-${step.kind}${status}"><span class="n">${number}</span><a class="k" href="#${anchor}-m${step.seq}">${what}</a><span class="w">${
    step.startMs === undefined ? '' : timeHtml(new Date(step.startMs).toISOString(), true)
  }</span><span class="track">${bar}</span><span class="d">${
    step.durationMs !== undefined
      ? formatDuration(step.durationMs)
      : step.status === 'interrupted'
        ? 'unknown'
        : ''
  }</span>${tokens}</li>`;
}

function markRow(mark: TimelineMark, anchor: string): string {
  const icon = { revived: '⟲', failed: '✕', stopped: '■', compaction: '≡', died: '✝' }[mark.kind];
  const down = mark.downMs === undefined ? '' : ` (down ${formatDuration(mark.downMs)})`;
  const at = mark.atMs === undefined ? '' : ` ${timeHtml(new Date(mark.atMs).toISOString(), true)}`;
  const text =
    mark.kind === 'died'
      ? `<a href="#${anchor}-stopped">${escapeHtml(mark.text)}</a>`
      : escapeHtml(mark.text);
  return `<li class="mark mark-${mark.kind}">${icon} ${text}${down}${at}</li>`;
}

/**
 * A duration for people: `340 ms`, `4.2 s`, `3 min 5 s`, `2 h 3 min`.
 *
 * @example
 * formatDuration(185_000); // '3 min 5 s'
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 1440) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${Math.floor(minutes / 1440)} d ${Math.floor((minutes % 1440) / 60)} h`;
}
