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
import { conversationView } from '../transcript/conversation-view.ts';
import { peek } from '../transcript/peek.ts';
import { type RenderAnswer, type RenderJob, sectionOptions } from './render-job.ts';

export type { RenderAnswer, RenderJob, RenderLimits } from './render-job.ts';

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
