/**
 * The ui's pages: the tree with the plan (`/`), or the tree with one run's conversation
 * (`/run?path=…`), drawn by the `show --html` renderer with the parts only the served page has
 * — the plan and its Confirm button, the activity log, the folders not read, the page script.
 *
 * @module
 */
import { runTreeHtml } from '../render/conversation-html.ts';
import { escapeHtml } from '../render/escape-html.ts';
import type { NotRead } from '../runs/find-transcripts.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { runBranch } from './run-branch.ts';
import { shownCommand, type UiAction, type UiSource } from './ui-source.ts';

/** The states a run can be in: the plan's rows follow the tree's filter by state. */
const STATES = [
  'running',
  'finished',
  'revivable',
  'failed',
  'stopped',
  'capped',
  'unreadable',
  'empty',
  'queued',
] as const satisfies readonly RunNode['state'][];

/** A run's page of a tree of more runs than this shows the run's branch (`run-branch.ts`). */
const BRANCH_ABOVE = 100;

/** Styles for the parts this server adds to the page. */
const EXTRA_STYLE = `<style>
#revive,#activity{border:2px solid #1971c2;padding:.4rem .8rem;margin:1rem 0;background:#f1f7ff}
#revive.brief{border-width:1px;padding:0 .8rem}#revive.brief:empty{display:none}
#activity:has(#log:empty):has(#revive-status:empty){display:none}
#revive-status.ended{color:#2b8a3e}#revive-status.failed{color:#c92a2a}
#revive pre{background:#fff;padding:.4rem}
#log{font-family:ui-monospace,monospace;font-size:12.5px;white-space:pre-wrap;max-height:20rem;overflow:auto;background:#fff;padding:.4rem}
button{font-size:14px;padding:.3rem 1rem}
table.plan{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
table.plan th,table.plan td{border-bottom:1px solid #dee2e6;padding:.3rem .5rem;text-align:left;vertical-align:top}
table.plan td.n{text-align:right;white-space:nowrap}table.plan ul{margin:0;padding-left:1rem}
table.plan .warn{color:#c92a2a;font-weight:600}#plan-table>summary{font-weight:600;margin:.3rem 0}
${STATES.map((state) => `body:has(#filter-${state}:checked) tr.plan-run:not(.state-${state})`).join(',')}{display:none}
</style>`;

/**
 * What a page needs of the server besides the source.
 *
 * @example
 * const context: PageContext = { token, running: false };
 */
export interface PageContext {
  /** The token the page's script sends with a Confirm. */
  token: string;
  /** Whether a command is running now (Confirm disabled, the status says so). */
  running: boolean;
  /** The section of one run, rendered apart (off the server's thread for files). */
  section: SectionRenderer;
  /** The way the user ran `llm-agent`, the command shown starting with it (default that). */
  invocation?: string | undefined;
}

/**
 * Renders the section of `node` (started by `parent`), its anchor `anchor`, showing page
 * `page` of its conversation.
 *
 * @example
 * const section: SectionRenderer = async (node) => `<section class="run">${node.path}</section>`;
 */
export type SectionRenderer = (
  node: RunNode,
  parent: RunNode | undefined,
  anchor: string,
  page: number,
) => Promise<string>;

/**
 * The tree with the plan (`run` undefined), or the tree with the conversation of the run
 * whose path is `run` — undefined when the tree has no such run: a path from the URL is
 * only ever compared with the tree's, never opened.
 *
 * @example
 * const html = await uiPage(source, undefined, { token, running: false });
 */
export async function uiPage(
  source: UiSource,
  run: { path: string; page: number } | undefined,
  context: PageContext,
): Promise<string | undefined> {
  const { roots, notRead } = await source.tree();
  let main = '';
  let shown: RunNode | undefined;
  let drawn = roots;
  let branchNote = '';
  if (run !== undefined) {
    const nodes = [...walkTree(roots)];
    const index = nodes.findIndex((node) => node.path === run.path);
    shown = nodes[index];
    if (shown === undefined) return undefined;
    const parent = nodes.find((node) => node.children.includes(shown as RunNode));
    main = await context.section(shown, parent, `run-${index}`, run.page);
    // A run's page of a large tree shows the run's branch, not every run of the tree.
    const branch = nodes.length > BRANCH_ABOVE ? runBranch(roots, shown) : undefined;
    if (branch !== undefined) {
      drawn = branch;
      branchNote = `<p class="meta">The run's branch of ${nodes.length.toLocaleString('en-US')} runs: the runs that led to it, it and its children.</p>`;
    }
  }
  const action = await source.action(roots);
  return runTreeHtml(drawn, new Map(), {
    generatedAt: new Date().toISOString(),
    sections: [],
    // Relative: every link of the page keeps the token, its first path segment.
    href: (node) => `run?path=${encodeURIComponent(node.path)}`,
    served: {
      madeBy: 'llm-agent ui',
      head: `<meta name="llm-agent-token" content="${context.token}">\n${EXTRA_STYLE}`,
      headerEnd: `${branchNote}${notReadHtml(notRead)}${shown === undefined ? '' : '<p><a href="./">← the whole tree</a></p>'}`,
      afterHeader: `${actionHtml(action, shown !== undefined, context)}\n${activityHtml(context.running)}`,
      bodyEnd: '<script src="app.js"></script>',
      main,
    },
  });
}

/**
 * The plan and its Confirm button; on a run's page (`brief`), one line linking to them, so
 * that the conversation comes first and nothing is confirmed without the plan in view.
 */
function actionHtml(action: UiAction, brief: boolean, context: PageContext): string {
  const { running } = context;
  const count = `${action.runs} run${action.runs === 1 ? '' : 's'}`;
  if (brief) {
    return `<section id="revive" class="brief">${
      action.runs === 0
        ? ''
        : `<p>${count} to ${action.verb}: <a href="./#revive">the plan, and Confirm</a></p>`
    }</section>`;
  }
  const title = action.verb === 'revive' ? 'Revive…' : 'Approve…';
  const shown = shownCommand(action, context.invocation);
  const effect =
    action.verb === 'revive'
      ? 'nothing is spent before you confirm.'
      : 'nothing is approved before you confirm; a worker then revives each run once.';
  return [
    '<section id="revive">',
    `<h2>${title}</h2>`,
    action.table === undefined || action.table === ''
      ? `<pre id="plan">${escapeHtml(action.text)}</pre>`
      : `${action.table}\n<details><summary>The plan as <code>revive</code> prints it</summary><pre id="plan">${escapeHtml(action.text)}</pre></details>`,
    action.runs === 0
      ? ''
      : `<p>Runs <code>${escapeHtml(shown)}</code>: ${effect}</p>\n<button id="confirm" type="button"${running ? ' disabled' : ''}>Confirm: ${action.verb} ${count}</button>`,
    '</section>',
  ].join('\n');
}

function activityHtml(running: boolean): string {
  return [
    '<section id="activity">',
    `<h2>Activity <span id="revive-status">${running ? 'running…' : ''}</span></h2>`,
    '<div id="log" aria-live="polite"></div>',
    '</section>',
  ].join('\n');
}

/** The folders below the PATHs that could not be read: their runs are missing from the tree. */
function notReadHtml(notRead: readonly NotRead[]): string {
  return notRead
    .map(
      (folder) =>
        `<p class="halt">Not read: <code>${escapeHtml(folder.path)}</code> (${escapeHtml(folder.reason)}): the runs in it are not shown</p>\n`,
    )
    .join('');
}
