/**
 * `show --html` output: a run tree and each run's conversation as one self-contained, offline
 * HTML page, for attaching to a bug report. Pure: data in, a string out.
 *
 * Every string taken from a transcript (text, tool names, ids, inputs, outputs, labels, paths,
 * errors) is untrusted. It only ever reaches the page through {@link escapeHtml}, as element
 * text: never as a tag, an attribute name or value, a URL or a style. Control and invisible
 * format characters (bidi overrides and isolates among them) are shown escaped (`\u202e`), as
 * `show` does for a terminal. The page carries a Content-Security-Policy that allows no script,
 * no image and no request at all (`default-src 'none'`); its one style sheet is inline, and
 * long values fold with `<details>`, which needs no JavaScript.
 *
 * @module
 */
import { INTERRUPTED_MESSAGE } from '../revival/index.ts';
import type { TornTail } from '../transcript/classify-tail.ts';
import { conversationView, type ViewMessage } from '../transcript/conversation-view.ts';
import type { PeekResult } from '../transcript/peek.ts';
import type { ForeignRecord, JsonValue, TranscriptRecord } from '../transcript/records.ts';
import { emptyTailState, foldTailState } from '../transcript/tail-state.ts';
import { escapeHtml } from './escape-html.ts';
import { fileTexts } from './file-texts.ts';
import { runTimeline } from './run-timeline.ts';
import { TIMELINE_STYLE, timelineHtml } from './timeline-html.ts';
import { timeHtml } from './time-html.ts';
import { envelopeLine, MAX_VALUE_DEPTH } from './format-conversation.ts';
import { formatBytes, formatCount, openCalls, whyOf } from './format-status.ts';
import { haltSentence } from './halt-text.ts';
import { type RunNode, type StatusState, walkTree } from './run-node.ts';
import { serializeJson } from './json-text.ts';

/**
 * What was read of one run of the tree: its records (and a torn tail), or why it could not be
 * read.
 *
 * @example
 * const read: RunRecords = { records: (await peek(path)).records };
 * const failed: RunRecords = { error: 'line 3: checksum mismatch' };
 */
export type RunRecords =
  | { records: (TranscriptRecord | ForeignRecord)[]; torn?: TornTail }
  | { error: string };

/**
 * What a page shows of one run, from a {@link peek} of its transcript.
 *
 * @example
 * read.set(node.path, runRecordsOf(await peek(node.path)));
 */
export function runRecordsOf(peeked: PeekResult): RunRecords {
  if (!peeked.ok) return { error: peeked.detail };
  return peeked.torn === undefined
    ? { records: peeked.records }
    : { records: peeked.records, torn: peeked.torn };
}

/**
 * Options of {@link runTreeHtml}.
 *
 * @example
 * runTreeHtml(roots, read, { envelopes: true, generatedAt: new Date().toISOString() });
 */
export interface RunTreeHtmlOptions {
  /** Interleave every envelope (dispatches, settles, checkpoints…), not only revivals and halts. */
  envelopes?: boolean;
  /** When the page was made, shown in its header. */
  generatedAt?: string;
  /** Values longer than this many characters (or 12 lines) fold into `<details>` (default 400). */
  foldAt?: number;
  /**
   * The runs whose conversations the page holds (default: every run of the tree). A page of a
   * large tree holds one, and links the others with `href`.
   */
  sections?: readonly RunNode[];
  /** Where a run of the tree links to (default: its section on this page, `#run-N`). */
  href?: (node: RunNode) => string;
  /**
   * For a served page: values longer than `limit` characters keep their first `limit`
   * characters in the page, and link the whole value, served apart, at `href(seq, part)` (the
   * record's seq and the part's index in its content). Without it every value is whole.
   */
  servedApart?: { limit: number; href: (seq: number, part: number) => string };
  /**
   * For a served page: the conversation in pages of `size` messages, showing `number` (from
   * 1; past the last shows the last), with links to the others at `href(number)`, and one to
   * where the run stopped (its last page, `#stopped`). Without it, the whole conversation.
   */
  paged?: { size: number; number: number; href: (number: number) => string };
  /**
   * For a page served with its own policy and script (`llm-agent ui`): markup of ours put in
   * its places — never text from a transcript. Without it the page is `show --html`'s: its
   * policy in a `<meta>` (no script at all), made "by llm-agent show --html".
   */
  served?: {
    /** Who made the page, shown in its header. */
    madeBy: string;
    /** Added to `<head>` (meta tags, a style sheet). */
    head: string;
    /** Added at the end of `<header>`. */
    headerEnd: string;
    /** Between `</header>` and `<main>`. */
    afterHeader: string;
    /** At the start of `<main>`: sections rendered apart ({@link runSectionHtml}). */
    main?: string;
    /** Added at the end of `<body>`. */
    bodyEnd: string;
  };
}

/** The envelopes shown inline even without `envelopes`: the crash history and the halts. */
const MARKED_ENVELOPES = new Set(['run-revived', 'run-failed', 'run-stopped', 'compaction']);

/** The page's policy: nothing may load or run; only the inline style sheet applies. */
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'";

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1d1d1f;background:#fff}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin:0 0 .4rem}
code,pre,.v{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2rem 0}
nav ul{list-style:none;padding-left:1.2rem;margin:.2rem 0}nav>ul{padding-left:0}
nav li{margin:.15rem 0}
.state{display:inline-block;padding:0 .4rem;border-radius:.3rem;font-weight:600;background:#eee}
.state-finished{background:#d8f3dc}.state-revivable,.state-stopped{background:#fff3bf}
.state-failed,.state-unreadable,.state-capped{background:#ffd6d6}.state-running{background:#d0ebff}
.meta{color:#555}
section.run{border-top:2px solid #ccc;margin-top:1.5rem;padding-top:.8rem}
.facts{margin:.3rem 0 .8rem;padding:0;list-style:none}.facts li{margin:.1rem 0}
.msg{border-left:4px solid #bbb;margin:.6rem 0;padding:.2rem .7rem;background:#fafafa}
.role-user{border-color:#2b8a3e}.role-assistant{border-color:#1971c2}.role-tool{border-color:#e8a400}
.system{border-color:#9c36b5;background:#f8f0fc}
.head{font-weight:600}.seq{color:#777;font-weight:400}
.badge{display:inline-block;margin-left:.4rem;padding:0 .4rem;border-radius:.3rem;font-size:12px;font-weight:600;background:#9c36b5;color:#fff}
.badge.warn{background:#c92a2a}.badge.open{background:#e8590c}
.part{margin:.3rem 0}.call{color:#1864ab}.result{color:#2b8a3e}.error{color:#c92a2a}
.interrupted{outline:2px solid #c92a2a;outline-offset:2px;background:#fff5f5}
.envelope{color:#666;font-size:12.5px;margin:.3rem 0}
.revival{border:2px dashed #c92a2a;padding:.4rem .7rem;margin:.8rem 0;background:#fff5f5;color:#1d1d1f;font-size:14px}
.halt{border:2px solid #e8590c;padding:.4rem .7rem;margin:.8rem 0;background:#fff4e6}
details>summary{cursor:pointer;color:#555}
.runs{margin:.2rem 0;font-size:13px}
.msg{content-visibility:auto;contain-intrinsic-size:auto 5rem}
.pager{margin:.6rem 0;padding:.3rem .6rem;background:#f1f3f5;border-radius:.3rem}.pager a,.pager .off{margin-left:.6rem}.pager .off{color:#999}.pager .jump{font-weight:600}
.apart{color:#555;font-size:12.5px}
.key{color:#555;font-size:12px;margin-top:.3rem}pre.lines{counter-reset:line;background:#f8f9fa;padding:.2rem 0}pre.lines>span{display:block;padding-left:3.6em;text-indent:-3.6em}pre.lines>span::before{counter-increment:line;content:counter(line);display:inline-block;width:3em;margin-right:.6em;text-align:right;color:#999;text-indent:0;user-select:none}.at{color:#777;font-weight:400;font-size:12.5px}time{cursor:help}
#filters{border:0;padding:0;margin:.4rem 0}#filters legend{float:left;margin-right:.6rem;color:#555}#filters label{margin-right:.9rem;white-space:nowrap}
`;

/**
 * The whole page: a header with the tree of runs (state, why, revivals used and the cap, open
 * calls), each linking to its run's section; then per run its crash history (each revival,
 * the calls it answered as interrupted) and its conversation as the model sees it, turns the
 * system wrote marked, interrupted answers and resume notices flagged, calls still in flight
 * when the process died flagged, and how the run halted.
 *
 * @example
 * const roots = await inspectTree(await findTranscripts(['runs/main.jsonl'], cwd), 3, cwd);
 * const read = new Map(paths.map((path) => [path, { records: peeked(path) }]));
 * process.stdout.write(runTreeHtml(roots, read));
 */
export function runTreeHtml(
  roots: RunNode[],
  read: ReadonlyMap<string, RunRecords>,
  options: RunTreeHtmlOptions = {},
): string {
  const nodes = [...walkTree(roots)];
  const anchors = new Map(nodes.map((node, index) => [node, `run-${index}`]));
  const href = options.href ?? ((node: RunNode) => `#${anchors.get(node)}`);
  const filters = stateFilters(nodes);
  const title = roots[0] === undefined ? 'no runs' : roots[0].displayPath;
  const served = options.served;
  const out: string[] = [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    served === undefined
      ? `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`
      : '',
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>llm-agent runs: ${escapeHtml(title)}</title>`,
    `<style>${STYLE}${TIMELINE_STYLE}${filters.style}</style>`,
    served?.head ?? '',
    '</head>',
    '<body>',
    '<header>',
    `<h1>Run tree: ${escapeHtml(title)}</h1>`,
    `<p class="meta">${nodes.length} run${nodes.length === 1 ? '' : 's'}${
      options.generatedAt === undefined ? '' : ` · made ${timeHtml(options.generatedAt)}`
    } · by ${served?.madeBy ?? 'llm-agent show --html'}</p>`,
    filters.html,
    '<nav aria-label="runs">',
    treeList(roots, href),
    '</nav>',
    served?.headerEnd ?? '',
    '</header>',
    served?.afterHeader ?? '',
    '<main>',
    served?.main ?? '',
  ];
  const parents = new Map(nodes.flatMap((node) => node.children.map((child) => [child, node])));
  for (const node of options.sections ?? nodes) {
    const section = runSection(node, anchors.get(node) as string, read.get(node.path), options, {
      href,
      parent: parents.get(node),
    });
    out.push(section);
  }
  out.push('</main>', served?.bodyEnd ?? '', '</body>', '</html>');
  return `${out.filter((part) => part !== '').join('\n')}\n`;
}

function treeList(nodes: RunNode[], href: (node: RunNode) => string): string {
  if (nodes.length === 0) return '<p>No runs.</p>';
  const items = nodes.map(
    (node) =>
      `<li><a href="${escapeHtml(href(node))}">${escapeHtml(runName(node))}</a> ${runFacts(node)}${
        node.children.length === 0 ? '' : `\n${treeList(node.children, href)}`
      }</li>`,
  );
  return `<ul>\n${items.join('\n')}\n</ul>`;
}

/** Every state a run can be in (a key missing here would not type-check). */
const ALL_STATES = Object.keys({
  running: true,
  finished: true,
  revivable: true,
  failed: true,
  stopped: true,
  capped: true,
  unreadable: true,
  empty: true,
  queued: true,
} satisfies Record<StatusState, true>) as StatusState[];

/**
 * Filters by state, without script: a radio button per state the tree has, and a rule per
 * state that hides the runs (and their sections) not in it — a run stays in the tree while a
 * run below it is in the state, so the tree keeps its shape. The state names are ours, never
 * a transcript's.
 */
function stateFilters(nodes: readonly RunNode[]): { html: string; style: string } {
  const counts = new Map<StatusState, number>();
  for (const node of nodes) counts.set(node.state, (counts.get(node.state) ?? 0) + 1);

  const choice = (id: string, label: string, count: number, checked: boolean): string =>
    `<label><input type="radio" name="state" id="${id}"${checked ? ' checked' : ''}> ${label} (${count})</label>`;
  const states = [...counts.keys()].sort();
  const html =
    nodes.length === 0
      ? ''
      : [
          '<fieldset id="filters"><legend>Show</legend>',
          choice('filter-all', 'all', nodes.length, true),
          ...states.map((state) =>
            choice(`filter-${state}`, state, counts.get(state) as number, false),
          ),
          '</fieldset>',
        ].join('\n');
  // A rule for every state, not only those here now: a page redrawn in place keeps its head,
  // and a state that appears later must filter too.
  const style = ALL_STATES.map(
    (state) =>
      `body:has(#filter-${state}:checked) nav li:not(:has(.state-${state})),body:has(#filter-${state}:checked) section.run:not(:has(>h2 .state-${state})){display:none}`,
  ).join('\n');
  return { html, style };
}

function runName(node: RunNode): string {
  const inspection = node.inspection;
  const label = inspection.label === undefined ? '' : ` “${inspection.label}”`;
  return `${inspection.agentId ?? node.displayPath}${label}`;
}

/** State, why, revivals used of the cap, open calls, size, and the tokens a revive would send: `status`'s columns. */
function runFacts(node: RunNode): string {
  const inspection = node.inspection;
  const quiet = node.state === 'finished' || node.state === 'running';
  return [
    `<span class="state state-${node.state}">${node.state}</span>`,
    quiet ? '' : ` · ${escapeHtml(whyOf(node))}`,
    ` · revivals ${inspection.revivalsUsed}/${inspection.maxRevivals}`,
    ` · open calls ${openCalls(node)}`,
    ` · ${formatBytes(inspection.bytes)}`,
    inspection.revivable
      ? ` · resuming sends about ${formatCount(inspection.estimatedTokens)} tokens`
      : '',
  ].join('');
}

/**
 * One run's section of the page — its facts, crash history, conversation and halt — as
 * {@link runTreeHtml} draws it: for a page whose sections are rendered apart (the ui renders
 * a run's section off its main thread). `parent` is the run that started it, if any.
 *
 * @example
 * const html = runSectionHtml(node, 'run-3', runRecordsOf(await peek(node.path)), { href }, parent);
 */
export function runSectionHtml(
  node: RunNode,
  anchor: string,
  read: RunRecords | undefined,
  options: RunTreeHtmlOptions & { href: (node: RunNode) => string },
  parent: RunNode | undefined,
): string {
  return runSection(node, anchor, read, options, { href: options.href, parent });
}

function runSection(
  node: RunNode,
  anchor: string,
  read: RunRecords | undefined,
  options: RunTreeHtmlOptions,
  tree: { href: (node: RunNode) => string; parent: RunNode | undefined },
): string {
  const { href, parent } = tree;
  const inspection = node.inspection;
  const out: string[] = [`<section class="run" id="${anchor}">`];
  out.push(`<h2>${escapeHtml(runName(node))} ${runFacts(node)}</h2>`);
  out.push('<ul class="facts">');
  out.push(`<li>transcript <code>${escapeHtml(node.displayPath)}</code></li>`);
  if (parent !== undefined) {
    const callId = inspection.parent?.callId;
    out.push(
      `<li>started by <a href="${escapeHtml(href(parent))}">${escapeHtml(runName(parent))}</a>${
        callId === undefined ? '' : ` with call <code>${escapeHtml(callId)}</code>`
      }</li>`,
    );
  }
  if (inspection.agentType !== undefined) {
    out.push(`<li>agent type <code>${escapeHtml(inspection.agentType)}</code></li>`);
  }
  out.push('</ul>');
  if (read === undefined || 'error' in read) {
    const why = read === undefined ? 'not read' : read.error;
    out.push(`<p class="halt">The conversation could not be read: ${escapeHtml(why)}</p>`);
    out.push('</section>');
    return out.join('\n');
  }
  out.push(crashHistory(node, read.records));
  out.push(
    conversationHtml(read.records, node, anchor, options, childLinks(node, read.records, href)),
  );
  let state = emptyTailState();
  for (const record of read.records) state = foldTailState(state, record, 0);
  if (state.halt !== null) {
    out.push(`<p class="halt">The run ${escapeHtml(haltSentence(state.halt))}</p>`);
  }
  if (read.torn !== undefined) {
    out.push(
      `<p class="envelope">torn tail: ${read.torn.tornBytes} bytes after the last record (${escapeHtml(
        read.torn.reason,
      )}); opening the transcript for writing repairs it</p>`,
    );
  }
  out.push('</section>');
  return out.join('\n');
}

/** Each revival counted, with what it answered; and, for a run that died since, what is open. */
function crashHistory(node: RunNode, records: (TranscriptRecord | ForeignRecord)[]): string {
  const lines: string[] = [];
  for (const record of records) {
    if ('unknown' in record || record.type !== 'run-revived') continue;
    lines.push(
      `<li>revival #${record.ordinal} of ${record.maxRevivals}: the process died after seq ${record.afterSeq}${idList(
        '; answered as interrupted (outcome unknown, not retried)',
        record.interrupted,
      )}${idList('; completed, result not persisted', record.completedUnpersisted)}${idList(
        '; orphaned',
        record.orphaned,
      )}${reconciledList(record.reconciled ?? [])}</li>`,
    );
  }
  const inspection = node.inspection;
  if (node.state === 'revivable' || node.state === 'capped') {
    const open = inspection.openDispatches.map((call) => call.callId);
    lines.push(
      `<li>the process died${idList('; in flight', open)}${idList(
        '; never started',
        inspection.neverDispatched.map((call) => call.callId),
      )}</li>`,
    );
  }
  if (lines.length === 0) return '';
  return `<div class="revival"><strong>Crash history</strong> (${inspection.revivalsUsed} revival${
    inspection.revivalsUsed === 1 ? '' : 's'
  } used of ${inspection.maxRevivals})<ul>\n${lines.join('\n')}\n</ul></div>`;
}

/** What each tool's reconcile answered about the calls a revival settled (format 2). */
function reconciledList(reconciled: { callId: string; answer: string }[]): string {
  return reconciled.length === 0
    ? ''
    : `; asked its tool's reconcile: ${reconciled
        .map((asked) => `<code>${escapeHtml(asked.callId)}</code> ${escapeHtml(asked.answer)}`)
        .join(', ')}`;
}

function idList(label: string, ids: string[]): string {
  return ids.length === 0
    ? ''
    : `${label}: ${ids.map((id) => `<code>${escapeHtml(id)}</code>`).join(', ')}`;
}

/**
 * The child runs each call of `node` reached, as links, by call id: the children a spawn call
 * started (their `session-meta` names the call), and the children a join call waited for (its
 * dispatch record names them). Only children of the tree are linked, each by our own href.
 */
function childLinks(
  node: RunNode,
  records: (TranscriptRecord | ForeignRecord)[],
  href: (node: RunNode) => string,
): Map<string, string> {
  const reached = new Map<string, RunNode[]>();
  const add = (callId: string, child: RunNode): void => {
    const list = reached.get(callId) ?? [];
    if (!list.includes(child)) list.push(child);
    reached.set(callId, list);
  };
  for (const child of node.children) {
    const callId = child.inspection.parent?.callId;
    if (callId !== undefined) add(callId, child);
  }
  const byAgent = new Map(
    node.children.flatMap((child) =>
      child.inspection.agentId === undefined ? [] : [[child.inspection.agentId, child] as const],
    ),
  );
  for (const record of records) {
    if ('unknown' in record || record.type !== 'tool-dispatched') continue;
    for (const agentId of record.joins ?? []) {
      const child = byAgent.get(agentId);
      if (child !== undefined) add(record.callId, child);
    }
  }
  const links = new Map<string, string>();
  for (const [callId, children] of reached) {
    links.set(
      callId,
      `<div class="runs">child run${children.length === 1 ? '' : 's'}: ${children
        .map(
          (child) =>
            `<a href="${escapeHtml(href(child))}">${escapeHtml(runName(child))}</a> <span class="state state-${child.state}">${child.state}</span>`,
        )
        .join(', ')}</div>`,
    );
  }
  return links;
}

/** The conversation view of one run, envelopes interleaved by seq. */
function conversationHtml(
  records: (TranscriptRecord | ForeignRecord)[],
  node: RunNode,
  anchor: string,
  options: RunTreeHtmlOptions,
  links: Map<string, string>,
): string {
  const messages = conversationView(records);
  const envelopes = records
    .filter((record) => record.type !== 'message')
    .filter((record) => options.envelopes === true || MARKED_ENVELOPES.has(record.type))
    .sort((left, right) => left.seq - right.seq);
  // Calls the process died in (a run not revived since): flagged beside their call.
  const died = node.state === 'revivable' || node.state === 'capped';
  const joins = new Set(died ? node.inspection.pendingJoins.map((join) => join.callId) : []);
  const inFlight = new Map(
    (died ? node.inspection.openDispatches : []).map((call) => [
      call.callId,
      joins.has(call.callId)
        ? 'waiting on its children when the process died'
        : 'in flight when the process died: no result',
    ]),
  );
  const neverStarted = new Set(
    died ? node.inspection.neverDispatched.map((call) => call.callId) : [],
  );
  const reconciled = reconcileAnswersOf(records);
  const out: string[] = [];
  const page = pageOf(messages, options.paged);
  const first = page.messages[0];
  let next =
    page.number > 1 && first !== undefined ? envelopes.findIndex((e) => e.seq >= first.seq) : 0;
  if (next < 0) next = envelopes.length;
  out.push(
    timelineHtml(runTimeline(records, died), {
      fromSeq: page.number > 1 && first !== undefined ? first.seq : Number.NEGATIVE_INFINITY,
      toSeq: page.last ? Number.POSITIVE_INFINITY : (page.nextSeq ?? Number.POSITIVE_INFINITY) - 1,
      paged: page.pager !== '',
      anchor,
    }),
  );
  out.push(page.pager);
  const flush = (beforeSeq: number): void => {
    while (next < envelopes.length) {
      const envelope = envelopes[next] as TranscriptRecord | ForeignRecord;
      if (envelope.seq >= beforeSeq) break;
      const revived = envelope.type === 'run-revived';
      out.push(
        `<div class="${revived ? 'revival' : 'envelope'}">${
          revived ? '<strong>⟲ revived here</strong> ' : '· '
        }${escapeHtml(envelopeLine(envelope))}</div>`,
      );
      next += 1;
    }
  };
  const shape: ValueShape = {
    fold: options.foldAt ?? 400,
    apart: options.servedApart,
    times: new Map(records.map((record) => [record.seq, record.at])),
    anchor,
  };
  for (const message of page.messages) {
    flush(message.seq);
    out.push(messageHtml(message, shape, { inFlight, neverStarted, reconciled }, links));
  }
  if (page.last) {
    flush(Number.POSITIVE_INFINITY);
    out.push(`<div id="stopped"></div><div id="${anchor}-stopped"></div>`);
  }
  if (messages.length === 0) out.push('<p class="meta">No messages.</p>');
  if (page.pager !== '') out.push(page.pager);
  return out.join('\n');
}

/** How values are shown: folded past `fold` characters; past `apart.limit`, served apart. */
interface ValueShape {
  fold: number;
  apart: RunTreeHtmlOptions['servedApart'];
  /** When each record was written, by seq. */
  times: Map<number, string>;
  /** The run's section's anchor: each message's id is `ANCHOR-mSEQ`. */
  anchor: string;
}

/**
 * The messages of the page shown, whether it is the last, and the links to the others (empty
 * when the conversation is one page).
 */
function pageOf(
  messages: ViewMessage[],
  paged: RunTreeHtmlOptions['paged'],
): {
  messages: ViewMessage[];
  number: number;
  last: boolean;
  pager: string;
  /** The seq of the next page's first message. */
  nextSeq?: number;
} {
  if (paged === undefined || messages.length <= paged.size) {
    return { messages, number: 1, last: true, pager: '' };
  }
  const pages = Math.ceil(messages.length / paged.size);
  const number = Math.min(Math.max(1, Math.floor(paged.number) || 1), pages);
  const link = (to: number, text: string): string =>
    to === number || to < 1 || to > pages
      ? `<span class="off">${text}</span>`
      : `<a href="${escapeHtml(paged.href(to))}">${text}</a>`;
  const pager = [
    `<nav class="pager" aria-label="pages">Messages ${(number - 1) * paged.size + 1}–${Math.min(number * paged.size, messages.length)} of ${messages.length} (page ${number} of ${pages}):`,
    link(1, 'first'),
    link(number - 1, '← earlier'),
    link(number + 1, 'later →'),
    `<a class="jump" href="${escapeHtml(`${paged.href(pages)}#stopped`)}">jump to where it stopped</a></nav>`,
  ].join(' ');
  const start = (number - 1) * paged.size;
  const next = messages[start + paged.size];
  return {
    messages: messages.slice(start, start + paged.size),
    number,
    last: number === pages,
    pager,
    ...(next === undefined ? {} : { nextSeq: next.seq }),
  };
}

/** A revival's answer to a call its tool's reconcile was asked about: what it answered. */
function reconcileBadge(answer: string | undefined): string {
  if (answer === undefined) return '';
  if (answer === 'completed') {
    return '<span class="badge">recovered: its tool\'s reconcile says it completed (not run again)</span>';
  }
  if (answer === 'did-not-happen') {
    return '<span class="badge warn">its tool\'s reconcile says it did not happen (not retried)</span>';
  }
  return '<span class="badge warn">its tool\'s reconcile could not tell</span>';
}

/** What each call's revival found: in flight, never started, settled by a reconcile. */
interface CallFlags {
  inFlight: Map<string, string>;
  neverStarted: Set<string>;
  /** What its tool's reconcile answered, by call id (the revivals' envelopes, format 2). */
  reconciled: Map<string, string>;
}

/** What each tool's reconcile answered about the calls revivals settled, by call id. */
function reconcileAnswersOf(records: (TranscriptRecord | ForeignRecord)[]): Map<string, string> {
  const answers = new Map<string, string>();
  for (const record of records) {
    if ('unknown' in record || record.type !== 'run-revived') continue;
    for (const asked of record.reconciled ?? []) answers.set(asked.callId, asked.answer);
  }
  return answers;
}

function messageHtml(
  message: ViewMessage,
  shape: ValueShape,
  flags: CallFlags,
  links: Map<string, string>,
): string {
  const { inFlight, neverStarted } = flags;
  const injected = message.extras?.injected;
  const interrupted = message.content.some(
    (part) => part.type === 'tool-result' && part.isError && part.output === INTERRUPTED_MESSAGE,
  );
  const badges: string[] = [];
  if (injected !== undefined) {
    badges.push(`<span class="badge">written by the system (${escapeHtml(injected)})</span>`);
  }
  if (injected === 'revival' && message.role === 'user') {
    badges.push('<span class="badge warn">resume notice</span>');
  }
  if (interrupted)
    badges.push('<span class="badge warn">interrupted: answered by a revival</span>');
  const classes = ['msg', `role-${roleClass(message.role)}`];
  if (injected !== undefined) classes.push('system');
  const out = [
    `<article class="${classes.join(' ')}" id="${shape.anchor}-m${message.seq}">`,
    `<div class="head">${escapeHtml(message.role)} <span class="seq">[seq ${message.seq}]</span>${atHtml(shape.times.get(message.seq))}${badges.join('')}</div>`,
  ];
  for (const [index, part] of message.content.entries()) {
    switch (part.type) {
      case 'text':
        out.push(`<div class="part">${shaped(part.text, shape, message.seq, index)}</div>`);
        break;
      case 'reasoning':
        out.push(
          `<details class="part"><summary>reasoning</summary>${shaped(part.text, shape, message.seq, index)}</details>`,
        );
        break;
      case 'tool-call': {
        const open = inFlight.get(part.callId);
        const flag =
          open !== undefined
            ? `<span class="badge open">${open}</span>`
            : neverStarted.has(part.callId)
              ? '<span class="badge open">never started</span>'
              : '';
        out.push(
          `<div class="part call${flag === '' ? '' : ' interrupted'}">→ call <strong>${escapeHtml(
            part.toolName,
          )}</strong> <code>${escapeHtml(part.callId)}</code>${flag}${links.get(part.callId) ?? ''}${valueHtml(part.input, shape, message.seq, index)}</div>`,
        );
        break;
      }
      case 'tool-result': {
        const wasInterrupted = part.isError && part.output === INTERRUPTED_MESSAGE;
        const kind = part.isError ? 'error' : 'result';
        out.push(
          `<div class="part ${kind}${wasInterrupted ? ' interrupted' : ''}">${
            part.isError ? '← error' : '← result'
          } <strong>${escapeHtml(part.toolName)}</strong> <code>${escapeHtml(part.callId)}</code>${
            wasInterrupted ? '<span class="badge warn">interrupted, outcome unknown</span>' : ''
          }${reconcileBadge(flags.reconciled.get(part.callId))}${valueHtml(part.output, shape, message.seq, index)}</div>`,
        );
        break;
      }
    }
  }
  out.push('</article>');
  return out.join('\n');
}

function atHtml(at: string | undefined): string {
  return at === undefined ? '' : ` <span class="at">${timeHtml(at)}</span>`;
}

/** A class name of our own for a role (a transcript's role never becomes one as it is). */
function roleClass(role: string): string {
  return role === 'user' || role === 'assistant' || role === 'tool' || role === 'system'
    ? role
    : 'other';
}

function block(text: string): string {
  return `<pre>${escapeHtml(text)}</pre>`;
}

/** A text as numbered lines (the numbers are the style sheet's, so a copy takes the text only). */
function numbered(text: string): string {
  // A file's last newline ends its last line: it does not start another.
  const whole = text.endsWith('\n') ? text.slice(0, -1) : text;
  const lines = whole.split('\n').map((line) => `<span>${escapeHtml(line)}</span>`);
  return `<pre class="lines">${lines.join('')}</pre>`;
}

/**
 * A tool's input or output for what it is ({@link fileTexts}): data pretty-printed, texts a
 * tool read or wrote as numbered lines under their key, a plain string as it is; each folded
 * or served apart as {@link shaped} decides.
 */
function valueHtml(value: JsonValue, shape: ValueShape, seq: number, part: number): string {
  const pieces = fileTexts(value);
  return pieces
    .map((piece) => {
      if (piece.kind === 'json') {
        const text = typeof piece.value === 'string' ? piece.value : render(piece.value);
        return shaped(text, shape, seq, part);
      }
      const lines = countLines(piece.text) - (piece.text.endsWith('\n') ? 1 : 0);
      const caption = `<div class="key">${piece.key === undefined ? 'text' : escapeHtml(piece.key)} · ${lines} line${lines === 1 ? '' : 's'}</div>`;
      return `${caption}${shaped(piece.text, shape, seq, part, numbered)}`;
    })
    .join('');
}

/**
 * The text of a part's value, as the page shows it (`valueText` is what the ui serves apart):
 * text as it is, a call's input and a result's output as JSON (a string output as it is).
 *
 * @example
 * const whole = valueText(message.content[0]); // the text of a text part
 */
export function valueText(part: ViewMessage['content'][number]): string {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return part.text;
    case 'tool-call':
      return render(part.input);
    case 'tool-result':
      return typeof part.output === 'string' ? part.output : render(part.output);
  }
}

/**
 * A value as {@link folded} shows it; past the served-apart limit, only its start is in the
 * page, with a link to the whole value.
 */
function shaped(
  text: string,
  shape: ValueShape,
  seq: number,
  part: number,
  draw: (text: string) => string = block,
): string {
  const apart = shape.apart;
  if (apart === undefined || text.length <= apart.limit) return folded(text, shape.fold, draw);
  const cut = /[\ud800-\udbff]/.test(text.charAt(apart.limit - 1)) ? apart.limit - 1 : apart.limit;
  const lines = countLines(text);
  return `<details><summary><span class="v">${escapeHtml(text.slice(0, 160).split('\n').slice(0, 2).join('\n'))}</span>… (${text.length} characters, ${lines} line${
    lines === 1 ? '' : 's'
  }: open to read the start)</summary>${draw(text.slice(0, cut))}<p class="apart">… ${text.length - cut} more characters: <a href="${escapeHtml(apart.href(seq, part))}" target="_blank" rel="noopener">the whole value</a> (served apart, as text)</p></details>`;
}

/** How many lines `text` has, without splitting it (a value may be many megabytes). */
function countLines(text: string): number {
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
  return lines;
}

/** A value whole, or folded into `<details>` with its start as the summary when long. */
function folded(text: string, limit: number, draw: (text: string) => string): string {
  const lines = countLines(text);
  if (text.length <= limit && lines <= 12) return draw(text);
  const start = text.slice(0, Math.min(limit, 160)).split('\n').slice(0, 2).join('\n');
  const end = /[\ud800-\udbff]/.test(start.charAt(start.length - 1)) ? start.length - 1 : undefined;
  return `<details><summary><span class="v">${escapeHtml(start.slice(0, end))}</span>… (${text.length} characters, ${lines} line${
    lines === 1 ? '' : 's'
  }: open to read)</summary>${draw(text)}</details>`;
}

function render(value: JsonValue): string {
  return serializeJson(value, { maxDepth: MAX_VALUE_DEPTH, indent: 2 });
}
