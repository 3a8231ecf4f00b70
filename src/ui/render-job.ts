/**
 * What the web view's render worker is asked and answers, and how a run's section is drawn —
 * shared by the worker (`run-render-worker.ts`), its pool and the pages that render in place.
 *
 * @module
 */
import type { RunTreeHtmlOptions } from '../render/conversation-html.ts';
import type { RunNode } from '../render/run-node.ts';

/**
 * A job for the worker: the section of `node` (a copy without its grandchildren) on `page`,
 * or the whole value of part `part` of the message at `seq`.
 *
 * @example
 * const job: RenderJob = { kind: 'value', path: '/runs/main.jsonl', seq: 12, part: 0 };
 */
export type RenderJob =
  | {
      kind: 'section';
      node: RunNode;
      parent: RunNode | undefined;
      anchor: string;
      page: number;
      limits: RenderLimits;
    }
  | { kind: 'value'; path: string; seq: number; part: number };

/**
 * How much of a run a page holds: values past `valueChars` characters are cut (the rest
 * served apart), and the conversation is shown `pageMessages` messages at a time.
 *
 * @example
 * const limits: RenderLimits = { valueChars: 16_384, pageMessages: 200 };
 */
export interface RenderLimits {
  valueChars: number;
  pageMessages: number;
}

/**
 * What the worker answers: the string asked for, absent when there is no such value.
 *
 * @example
 * const answer: RenderAnswer = { ok: true, text: '<section class="run">…</section>' };
 */
export type RenderAnswer = { ok: true; text: string | undefined } | { ok: false; error: string };

/**
 * How a served page draws a run's section: links relative (they keep the token), values past
 * the limit served apart at `value?…`, the conversation paged at `run?path=…&page=N`.
 *
 * @example
 * const html = runSectionHtml(node, 'run-2', read, sectionOptions(node, limits, 1), parent);
 */
export function sectionOptions(
  node: RunNode,
  limits: RenderLimits,
  page: number,
): RunTreeHtmlOptions & { href: (node: RunNode) => string } {
  const href = (run: RunNode): string => `run?path=${encodeURIComponent(run.path)}`;
  return {
    href,
    servedApart: {
      limit: limits.valueChars,
      href: (seq, index) => `value?path=${encodeURIComponent(node.path)}&seq=${seq}&part=${index}`,
    },
    paged: {
      size: limits.pageMessages,
      number: page,
      href: (number) => `${href(node)}&page=${number}`,
    },
  };
}
