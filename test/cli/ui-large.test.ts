/*
 * `llm-agent ui` on large runs: a record's size never holds the server, and a page holds a
 * bounded part of a run. A run with one 48 MB tool result: while its page is being made (in
 * the worker thread), a small request is answered first; the page holds the value's start
 * and a link to it, served apart, whole and exact. A run of many messages is paged, with a
 * link to where it stopped. No timing thresholds: only order and sizes.
 */
import assert from 'node:assert/strict';
import { mkdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Session } from '../../src/transcript/session.ts';
import { fileUiSource } from '../../src/ui/file-ui-source.ts';
import { startUiServer } from '../../src/ui/ui-server.ts';
import { sessionMeta } from '../support/transcripts.ts';
import { temporaryFolder } from './support/cli-fixtures.ts';
import { send } from './support/ui-child.ts';

const BIG = 48 * 1024 * 1024;

/** A finished run whose one tool call returned `output`. */
async function runWithResult(path: string, output: string): Promise<void> {
  const session = await Session.create(path, sessionMeta('big'));
  await session.appendDurable({
    type: 'message',
    role: 'user',
    content: [{ type: 'text', text: 'read the log' }],
  });
  await session.appendDurable({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'tool-call', callId: 'c1', toolName: 'read_file', input: { path: 'x' } }],
  });
  await session.appendDurable({
    type: 'message',
    role: 'tool',
    content: [{ type: 'tool-result', callId: 'c1', toolName: 'read_file', output, isError: false }],
  });
  await session.appendDurable({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'done' }],
  });
  await session.close();
}

/** A GET, resolving when its whole body has arrived, with the moment (a counter) it did. */
function timedGet(url: string, order: string[], name: string): Promise<number> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.on('end', () => {
        order.push(name);
        done(bytes);
      });
    });
    request.on('error', fail);
    request.end();
  });
}

describe('llm-agent ui: large runs', { timeout: 300_000 }, () => {
  test('a 48 MB tool result: other requests are answered while its page is made; the page holds its start; the value is served apart, whole', async () => {
    const folder = await temporaryFolder();
    try {
      await mkdir(join(folder, 'runs'));
      const path = join(folder, 'runs', 'big.jsonl');
      const output = `${'a'.repeat(BIG - 4)}tail`;
      await runWithResult(path, output);
      const server = await startUiServer({
        source: fileUiSource(['runs'], folder),
        cwd: folder,
        env: process.env,
        port: 0,
      });
      try {
        const base = `http://127.0.0.1:${server.port}/${server.token}`;
        const runUrl = `${base}/run?path=${encodeURIComponent(path)}`;
        const order: string[] = [];
        const page = timedGet(runUrl, order, 'run page');
        // Sent after the run page's request, while the worker reads the 48 MB record.
        await new Promise((done) => setTimeout(done, 50));
        const script = timedGet(`${base}/app.js`, order, 'script');
        const tree = timedGet(`${base}/`, order, 'tree');
        await Promise.all([page, script, tree]);
        assert.deepEqual(order, ['script', 'tree', 'run page'], 'the small requests first');

        const html = await send(runUrl);
        assert.equal(html.status, 200);
        assert.ok(html.body.length < 200_000, `the page holds a bounded part: ${html.body.length}`);
        assert.match(html.body, /\(50331648 characters, 1 line: open to read the start\)/);
        const link =
          /<a href="(value\?path=[^"]+)" target="_blank" rel="noopener">the whole value<\/a>/.exec(
            html.body,
          );
        assert.ok(link, 'the page links the whole value');
        const value = await new Promise<string>((done, fail) => {
          httpRequest(`${base}/${(link[1] as string).replaceAll('&amp;', '&')}`, (response) => {
            assert.equal(response.statusCode, 200);
            assert.match(String(response.headers['content-type']), /^text\/plain/);
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
          })
            .on('error', fail)
            .end();
        });
        assert.equal(value.length, output.length);
        assert.ok(value === output, 'the value served apart is the value, whole');
        // A value of a run not in the tree, or a part that does not exist: 404.
        for (const query of [
          `path=${encodeURIComponent('/etc/passwd')}&seq=1&part=0`,
          `path=${encodeURIComponent(path)}&seq=999&part=0`,
          `path=${encodeURIComponent(path)}&seq=x&part=0`,
        ]) {
          assert.equal((await send(`${base}/value?${query}`)).status, 404, query);
        }
      } finally {
        await server.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test('a run of many messages is paged, with a link to where it stopped', async () => {
    const folder = await temporaryFolder();
    try {
      await mkdir(join(folder, 'runs'));
      const path = join(folder, 'runs', 'long.jsonl');
      const session = await Session.create(path, sessionMeta('long'));
      for (let turn = 0; turn < 45; turn += 1) {
        await session.append({
          type: 'message',
          role: turn % 2 === 0 ? 'user' : 'assistant',
          content: [{ type: 'text', text: `turn ${turn}` }],
        });
      }
      await session.close();
      const server = await startUiServer({
        source: fileUiSource(['runs'], folder),
        cwd: folder,
        env: process.env,
        port: 0,
        limits: { valueChars: 1000, pageMessages: 20 },
      });
      try {
        const base = `http://127.0.0.1:${server.port}/${server.token}`;
        const runHref = `run?path=${encodeURIComponent(path)}`;
        const first = (await send(`${base}/${runHref}`)).body;
        assert.equal((first.match(/<article /g) ?? []).length, 20);
        assert.match(first, /Messages 1–20 of 45 \(page 1 of 3\)/);
        assert.ok(first.includes('&gt;turn 0<') || first.includes('>turn 0<'));
        assert.doesNotMatch(first, /turn 20</);
        assert.doesNotMatch(first, /id="stopped"/);
        assert.ok(
          first.includes(`href="${runHref.replaceAll('&', '&amp;')}&amp;page=3#stopped"`),
          'a link to where it stopped',
        );
        const last = (await send(`${base}/${runHref}&page=3`)).body;
        assert.equal((last.match(/<article /g) ?? []).length, 5);
        assert.match(last, /turn 44</);
        assert.match(last, /id="stopped"/);
        // A page past the last shows the last.
        assert.match((await send(`${base}/${runHref}&page=99`)).body, /page 3 of 3/);
      } finally {
        await server.close();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
