/**
 * A run's parts the server serves apart from the page: one whole value (`/value?path=…&seq=…
 * &part=…`), streamed as text; and a run's section rendered on the server's thread, for a
 * source that is not files (a store hands its records over already parsed).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { runSectionHtml, valueText } from '../render/conversation-html.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import { conversationView } from '../transcript/conversation-view.ts';
import { reply } from './request-guard.ts';
import type { RunRenderPool } from './run-render-pool.ts';
import { type RenderLimits, sectionOptions } from './render-job.ts';
import type { UiSource } from './ui-source.ts';

/** A whole value is written in slices of this many characters, each after the last drained. */
const SLICE = 64 * 1024;

/**
 * Answers `/value?path=P&seq=S&part=I` with the whole value of part I of the message at seq S
 * of run P — a run of the tree (a path is only compared with the tree's, never opened
 * otherwise) — as `text/plain`, in slices that wait for the socket to drain, so that a value
 * of many megabytes holds neither the thread nor more than one copy of itself.
 *
 * @example
 * await servedValue(source, pool, new URL('http://127.0.0.1/value?path=a&seq=3&part=0'), response);
 */
export async function servedValue(
  source: UiSource,
  pool: RunRenderPool,
  url: URL,
  response: ServerResponse,
): Promise<void> {
  const path = url.searchParams.get('path') ?? '';
  const seq = Number(url.searchParams.get('seq'));
  const part = Number(url.searchParams.get('part'));
  const { roots } = await source.tree();
  const node = [...walkTree(roots)].find((run) => run.path === path);
  if (node === undefined || !Number.isInteger(seq) || !Number.isInteger(part)) {
    reply(response, 404, 'text/plain', 'no such value in this tree');
    return;
  }
  const text =
    source.files === true
      ? await pool.run({ kind: 'value', path: node.path, seq, part })
      : await valueHere(source, node, seq, part);
  if (text === undefined) {
    reply(response, 404, 'text/plain', 'no such value in this run');
    return;
  }
  response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
  let at = 0;
  while (at < text.length) {
    let end = Math.min(at + SLICE, text.length);
    // A surrogate pair is never split between two slices.
    if (end < text.length && /[\ud800-\udbff]/.test(text.charAt(end - 1))) end += 1;
    if (!response.write(text.slice(at, end))) {
      await new Promise<void>((done) => {
        response.once('drain', done);
        response.once('close', done);
      });
      if (response.destroyed) return;
    }
    at = end;
  }
  response.end();
}

async function valueHere(
  source: UiSource,
  node: RunNode,
  seq: number,
  part: number,
): Promise<string | undefined> {
  const read = await source.records(node);
  if ('error' in read) return undefined;
  const found = conversationView(read.records).find((message) => message.seq === seq);
  const value = found?.content[part];
  return value === undefined ? undefined : valueText(value);
}

/**
 * The section of `node`, rendered here with the same options as the worker's.
 *
 * @example
 * const html = await runSectionHere(source, node, parent, 'run-2', 1, limits);
 */
export async function runSectionHere(
  source: UiSource,
  node: RunNode,
  parent: RunNode | undefined,
  anchor: string,
  page: number,
  limits: RenderLimits,
): Promise<string> {
  const options = sectionOptions(node, limits, page);
  return runSectionHtml(node, anchor, await source.records(node), options, parent);
}
