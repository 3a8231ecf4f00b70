/*
 * The web view's authority never leaves its origin. Cookies are not isolated by port: a
 * browser sends the cookies of 127.0.0.1 to every server on 127.0.0.1. So a page on another
 * local port, opened in the browser that holds the ui's page, must learn nothing that
 * authorises anything, and must start nothing.
 *
 * The attack, in Chromium: the ui's page is opened (as a user does, from the URL printed),
 * then a page of a hostile server on another port of 127.0.0.1. That page posts /revive to
 * the ui every way a page can without reading its answers (fetch with credentials, a form,
 * a beacon), and reports what it sees. Its server records everything the browser sends it.
 * The fault is proven first: the hostile page ran (its report arrived), and this browser does
 * send one port's cookies to another (a canary cookie set by a third port reaches the
 * hostile one). Then: nothing the hostile server received holds the ui's token; a plain client
 * replaying every cookie and value it received (as a cookie, the token header, the query, a
 * path) is refused; and the ui's Confirm command never started.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileUiSource } from '../../src/ui/file-ui-source.ts';
import { startUiServer } from '../../src/ui/ui-server.ts';
import { launchChromium } from './support/chromium.ts';
import { temporaryFolder, writeFixtureTree } from './support/cli-fixtures.ts';
import { send } from './support/ui-child.ts';

/** What a server on another port received: each request's line, headers and body. */
interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A server on 127.0.0.1 that records every request and answers with `answer`. */
async function recordingServer(
  answer: (url: string) => { type: string; body: string; headers?: Record<string, string> },
): Promise<{ server: Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const url = request.url ?? '/';
      received.push({ method: request.method ?? '', url, headers: request.headers, body });
      const { type, body: text, headers = {} } = answer(url);
      response.writeHead(200, { 'Content-Type': type, ...headers });
      response.end(text);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, port: (server.address() as AddressInfo).port, received };
}

/** The hostile page: it tries the ui every way a page of another origin can, then reports. */
function hostilePage(uiOrigin: string): string {
  return `<!DOCTYPE html><html><body>
<form id="f" method="POST" action="${uiOrigin}/revive" target="sink"><input name="a" value="b"></form>
<iframe name="sink"></iframe>
<script>
(async () => {
  const tries = [];
  const attempt = async (what, run) => {
    try { await run(); tries.push(what + ': sent'); } catch (error) { tries.push(what + ': ' + error); }
  };
  for (const path of ['/revive', '/', '/app.js', '/events']) {
    await attempt('fetch ' + path, () => fetch('${uiOrigin}' + path, { method: path === '/revive' ? 'POST' : 'GET', mode: 'no-cors', credentials: 'include' }));
  }
  await attempt('beacon', async () => navigator.sendBeacon('${uiOrigin}/revive', 'x'));
  await attempt('form', async () => document.getElementById('f').submit());
  await new Promise((done) => setTimeout(done, 500));
  await fetch('/report', { method: 'POST', body: JSON.stringify({ cookie: document.cookie, tries }) });
})();
</script></body></html>`;
}

describe('llm-agent ui: a page on another port of 127.0.0.1', { timeout: 120_000 }, () => {
  test('in Chromium: learns nothing that authorises anything, and starts nothing', async () => {
    const folder = await temporaryFolder();
    await writeFixtureTree(folder);
    const started = join(folder, 'started');
    await writeFile(
      join(folder, 'command.mjs'),
      `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(started)}, 'started');`,
    );
    const ui = await startUiServer({
      source: fileUiSource(['runs'], folder),
      cwd: folder,
      env: process.env,
      port: 0,
      command: [process.execPath, join(folder, 'command.mjs')],
    });
    const uiOrigin = `http://127.0.0.1:${ui.port}`;
    const canary = await recordingServer(() => ({
      type: 'text/html',
      body: '<p>canary</p>',
      headers: { 'Set-Cookie': 'canary_cookie=from_another_port; Path=/' },
    }));
    const hostile = await recordingServer((url) =>
      url === '/'
        ? { type: 'text/html', body: hostilePage(uiOrigin) }
        : { type: 'text/plain', body: 'ok' },
    );
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(`http://127.0.0.1:${canary.port}/`);
      await page.goto(ui.url);
      await page.waitForSelector('body[data-events="open"]');
      assert.equal(await page.locator('#confirm').count(), 1, 'the ui offers a revive');

      const other = await context.newPage();
      other.setDefaultTimeout(20_000);
      await other.goto(`http://127.0.0.1:${hostile.port}/`);
      for (let waited = 0; !hostile.received.some((r) => r.url === '/report'); waited += 100) {
        assert.ok(waited < 20_000, 'the hostile page never reported');
        await new Promise((done) => setTimeout(done, 100));
      }
      const report = JSON.parse(
        hostile.received.find((r) => r.url === '/report')?.body ?? '{}',
      ) as { cookie: string; tries: string[] };

      // The fault: the hostile page ran its attempts, and this browser sends the cookies of
      // one port of 127.0.0.1 to another.
      assert.equal(report.tries.length, 6, JSON.stringify(report.tries));
      assert.match(
        String(hostile.received[0]?.headers.cookie),
        /canary_cookie=from_another_port/,
        'the fault: a cookie set by one port is sent to another',
      );
      assert.match(report.cookie, /canary_cookie=from_another_port/);

      // Nothing the hostile server received holds the ui's token.
      const everything = JSON.stringify(hostile.received);
      assert.ok(!everything.includes(ui.token), `the token leaked: ${everything}`);

      // A plain client with everything received, every way the ui could take it, is refused.
      const values = new Set<string>();
      for (const received of hostile.received) {
        for (const part of String(received.headers.cookie ?? '').split(';')) {
          const [, ...value] = part.trim().split('=');
          values.add(value.join('='));
        }
      }
      values.add(report.cookie);
      for (const value of values) {
        const cookie = `llm_agent_ui_${ui.port}=${value}`;
        for (const [path, headers] of [
          ['/revive', { Cookie: cookie, 'X-LLM-Agent-Token': value }],
          [`/revive?token=${encodeURIComponent(value)}`, { 'X-LLM-Agent-Token': value }],
          [`/${encodeURIComponent(value)}/revive`, { 'X-LLM-Agent-Token': value }],
        ] as const) {
          const reply = await send(`${uiOrigin}${path}`, { method: 'POST', headers });
          assert.ok(reply.status >= 400, `${path} with ${value}: ${reply.status}`);
        }
      }
      // Nothing started (the command would have written its file at once).
      await new Promise((done) => setTimeout(done, 500));
      assert.equal(existsSync(started), false, 'the Confirm command never started');
      // And the ui still works for its own page.
      await page.reload();
      assert.equal(await page.locator('#confirm').count(), 1);
      await context.close();
    } finally {
      await browser.close();
      await ui.close();
      canary.server.close();
      hostile.server.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
