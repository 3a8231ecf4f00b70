/**
 * The worker thread that reads and renders one run of a file source for the ui, so that a run
 * of any size — a 48 MB tool result — never holds the server's thread: other requests are
 * answered while it works. Jobs come one at a time from `run-render-pool.ts`; each reads the
 * transcript again (as every page does) and answers with a string: the run's section of the
 * page (values past the served-apart limit cut, the conversation paged), or one whole value.
 *
 * @module
 */
import { parentPort } from 'node:worker_threads';
import { runRecordsOf, runSectionHtml, valueText } from '../render/conversation-html.ts';
import type { RunNode } from '../render/run-node.ts';
import { conversationView } from '../transcript/conversation-view.ts';
import { peek } from '../transcript/peek.ts';
import { sectionOptions } from './served-run.ts';

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
 * The job's answer (exported for the tests; the worker runs it on each message).
 *
 * @example
 * const answer = await runJob({ kind: 'value', path, seq: 3, part: 0 });
 */
export async function runJob(job: RenderJob): Promise<RenderAnswer> {
  try {
    if (job.kind === 'value') return { ok: true, text: await wholeValue(job) };
    return { ok: true, text: await section(job) };
  } catch (error) {
    return { ok: false, error: String(error).split('\n')[0] as string };
  }
}

async function section(job: Extract<RenderJob, { kind: 'section' }>): Promise<string> {
  const read = runRecordsOf(await peek(job.node.path));
  const options = sectionOptions(job.node, job.limits, job.page);
  return runSectionHtml(job.node, job.anchor, read, options, job.parent);
}

async function wholeValue(job: Extract<RenderJob, { kind: 'value' }>): Promise<string | undefined> {
  const peeked = await peek(job.path);
  if (!peeked.ok) return undefined;
  const message = conversationView(peeked.records).find((view) => view.seq === job.seq);
  const part = message?.content[job.part];
  return part === undefined ? undefined : valueText(part);
}

parentPort?.on('message', (job: RenderJob) => {
  void runJob(job).then((answer) => parentPort?.postMessage(answer));
});
