/**
 * The server behind `llm-agent ui`: a local web view of the run trees at some PATHs (the page
 * of `show --html`, read again on each request), their revival plan, and a Confirm button
 * that runs `llm-agent revive PATH… --yes` in a child process, its output streamed to the
 * page as server-sent events.
 *
 * Bound to 127.0.0.1 only. Every request must carry the server's token (in the query, or the
 * HttpOnly SameSite=Strict cookie set on the first valid visit); the one state-changing
 * request, POST /revive, must carry it in the `X-LLM-Agent-Token` header (a cross-site form
 * cannot set one) and, when it has an `Origin`, come from the server's own origin. Every
 * response forbids framing, sniffing, referrers, and any script or request but the server's.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { peek } from '../transcript/peek.ts';
import { escapeHtml, type RunRecords, runRecordsOf, runTreeHtml } from './conversation-html.ts';
import { findTranscripts } from './find-transcripts.ts';
import { inspectTree, walkTree } from './inspect-tree.ts';
import { DEFAULT_MAX_REVIVALS } from './status-command.ts';
import { createStyle } from './terminal-style.ts';
import { planText, planTreeRevival } from './tree-revival-plan.ts';

/**
 * What {@link startUiServer} serves.
 *
 * @example
 * const options: UiServerOptions = { paths: ['runs/'], cwd: process.cwd(), env: process.env, port: 0 };
 */
export interface UiServerOptions {
  /** The transcripts and folders shown and revived, as the user gave them. */
  paths: string[];
  /** The folder the paths are relative to, and the revive's working folder. */
  cwd: string;
  /** The environment of the revive child process. */
  env: Record<string, string | undefined>;
  /** The port to listen on, 0 for any free one. */
  port: number;
  /** An agent-definition module passed to `revive --agents`. */
  agents?: string;
}

/**
 * A running UI server.
 *
 * @example
 * const server = await startUiServer({ paths: ['runs/'], cwd, env: process.env, port: 0 });
 * console.log(server.url); // http://127.0.0.1:PORT/?token=…
 * await server.close();
 */
export interface UiServer {
  /** The URL to open, token included. */
  url: string;
  port: number;
  token: string;
  /** Stops listening, ends the event streams, and stops (SIGTERM) a revive still running. */
  close(): Promise<void>;
}

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The `<meta>` policy of the `show --html` page: no script at all; the header's applies here. */
const PAGE_POLICY_META = /<meta http-equiv="Content-Security-Policy" content="[^"]*">\n?/;

/** The CLI next to this module: main.ts from the sources, main.js from dist. */
const MAIN = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './main.js', import.meta.url),
);

/** The page's script: no inline script anywhere, every text from the server set as text. */
const APP_JS = `'use strict';
(function () {
  var token = document.querySelector('meta[name="llm-agent-token"]').getAttribute('content');
  var log = document.getElementById('log');
  var status = document.getElementById('revive-status');
  var reviving = false;
  function line(text) {
    var item = document.createElement('div');
    item.textContent = text;
    log.appendChild(item);
    log.scrollTop = log.scrollHeight;
  }
  // Refreshes can overlap (a revive's end and a change seen by polling): only the latest one
  // asked for is applied, so an older page never replaces a newer one.
  var latest = 0;
  function refresh() {
    var mine = ++latest;
    return fetch('/', { credentials: 'same-origin' })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        if (mine !== latest) return;
        var fresh = new DOMParser().parseFromString(html, 'text/html');
        ['header', 'main', '#revive'].forEach(function (selector) {
          var now = document.querySelector(selector);
          var next = fresh.querySelector(selector);
          if (now && next) now.replaceWith(document.adoptNode(next));
        });
        bind();
        document.body.setAttribute('data-refreshed', String(Date.now()));
      });
  }
  function bind() {
    var button = document.getElementById('confirm');
    if (!button) return;
    button.addEventListener('click', function () {
      button.disabled = true;
      reviving = true;
      status.textContent = 'reviving…';
      fetch('/revive', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'X-LLM-Agent-Token': token },
      }).then(function (response) {
        if (!response.ok) {
          reviving = false;
          return response.text().then(function (text) {
            status.textContent = 'refused: ' + text;
            button.disabled = false;
          });
        }
      });
    });
  }
  var events = new EventSource('/events');
  events.addEventListener('open', function () {
    document.body.setAttribute('data-events', 'open');
  });
  events.addEventListener('progress', function (event) { line(event.data); });
  events.addEventListener('done', function (event) {
    reviving = false;
    line('revive ended: exit code ' + event.data);
    status.textContent = 'revive ended (exit code ' + event.data + ')';
    refresh();
  });
  events.addEventListener('tree-changed', function () {
    if (!reviving) refresh();
  });
  bind();
})();
`;

/** Styles for the parts this server adds to the page. */
const EXTRA_STYLE = `<style>
#revive,#activity{border:2px solid #1971c2;padding:.4rem .8rem;margin:1rem 0;background:#f1f7ff}
#revive pre{background:#fff;padding:.4rem}
#log{font-family:ui-monospace,monospace;font-size:12.5px;white-space:pre-wrap;max-height:20rem;overflow:auto;background:#fff;padding:.4rem}
button{font-size:14px;padding:.3rem 1rem}
</style>`;

/** The revive in progress: its child, and the lines so far (replayed to a late listener). */
interface Revive {
  child: ChildProcess;
  events: string[];
}

/**
 * Start the server on 127.0.0.1 (see the module comment for what it serves and refuses).
 *
 * @example
 * const server = await startUiServer({ paths: ['runs/'], cwd: process.cwd(), env: process.env, port: 0 });
 * process.stdout.write(`${server.url}\n`);
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const token = randomBytes(32).toString('hex');
  const clients = new Set<ServerResponse>();
  let revive: Revive | undefined;
  let origin = '';
  let cookieName = '';

  const send = (event: string, data: string): string => {
    const frame = `event: ${event}\n${data
      .split(/\r\n|\r|\n/)
      .map((part) => `data: ${part}`)
      .join('\n')}\n\n`;
    for (const client of clients) client.write(frame);
    return frame;
  };

  const server = createServer((request, response) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        reply(response, 500, 'text/plain', `internal error: ${String(error).split('\n')[0]}`);
      } else response.end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', origin);
    // A page of another host name that resolves to us (DNS rebinding) is not served.
    if (request.headers.host !== origin.slice('http://'.length)) {
      reply(response, 403, 'text/plain', 'forbidden: wrong Host');
      return;
    }
    const byQuery = same(url.searchParams.get('token'), token);
    const byCookie = same(cookieOf(request, cookieName), token);
    const header = request.headers['x-llm-agent-token'];
    const byHeader = same(typeof header === 'string' ? header : null, token);
    if (!byQuery && !byCookie && !byHeader) {
      reply(response, 403, 'text/plain', 'forbidden: open the URL llm-agent ui printed');
      return;
    }
    if (byQuery && !byCookie) {
      response.setHeader('Set-Cookie', `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`);
    }
    if (request.method === 'POST') {
      const foreign = request.headers.origin !== undefined && request.headers.origin !== origin;
      if (!byHeader || foreign || url.pathname !== '/revive') {
        reply(response, 403, 'text/plain', 'forbidden');
        return;
      }
      startRevive(response);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      reply(response, 405, 'text/plain', 'method not allowed');
      return;
    }
    switch (url.pathname) {
      case '/':
        reply(response, 200, 'text/html; charset=utf-8', await page());
        return;
      case '/app.js':
        reply(response, 200, 'text/javascript; charset=utf-8', APP_JS);
        return;
      case '/events':
        openEvents(response);
        return;
      case '/favicon.ico':
        // Asked for by every browser: nothing, rather than a 404 in its console.
        response.writeHead(204);
        response.end();
        return;
      default:
        reply(response, 404, 'text/plain', 'not found');
    }
  }

  async function page(): Promise<string> {
    const paths = await findTranscripts(options.paths, options.cwd);
    const roots = await inspectTree(paths, DEFAULT_MAX_REVIVALS, options.cwd);
    const read = new Map<string, RunRecords>();
    for (const node of walkTree(roots)) {
      read.set(node.path, runRecordsOf(await peek(node.path)));
    }
    const plan = planTreeRevival(roots);
    const running = revive !== undefined;
    const section = [
      '<section id="revive">',
      '<h2>Revive…</h2>',
      `<pre id="plan">${escapeHtml(planText(plan, createStyle(false)))}</pre>`,
      plan.revivals.length === 0
        ? ''
        : `<p>Runs <code>llm-agent revive ${escapeHtml(options.paths.join(' '))} --yes</code>: nothing is spent before you confirm.</p>\n<button id="confirm" type="button"${running ? ' disabled' : ''}>Confirm: revive ${plan.revivals.length} run${plan.revivals.length === 1 ? '' : 's'}</button>`,
      '</section>',
    ].join('\n');
    const activity = [
      '<section id="activity">',
      `<h2>Activity <span id="revive-status">${running ? 'reviving…' : ''}</span></h2>`,
      '<div id="log" aria-live="polite"></div>',
      '</section>',
    ].join('\n');
    return runTreeHtml(roots, read, { generatedAt: new Date().toISOString() })
      .replace(PAGE_POLICY_META, '')
      .replace(
        '<meta charset="utf-8">',
        `<meta charset="utf-8">\n<meta name="llm-agent-token" content="${token}">`,
      )
      .replace('</head>', `${EXTRA_STYLE}\n</head>`)
      .replace('by llm-agent show --html', 'by llm-agent ui')
      .replace('</header>', `</header>\n${section}\n${activity}`)
      .replace('</body>', '<script src="/app.js"></script>\n</body>');
  }

  function openEvents(response: ServerResponse): void {
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    response.write(': connected\n\n');
    for (const frame of revive?.events ?? []) response.write(frame);
    clients.add(response);
    response.on('close', () => clients.delete(response));
  }

  function startRevive(response: ServerResponse): void {
    if (revive !== undefined) {
      reply(response, 409, 'text/plain', 'a revive is already running');
      return;
    }
    const args = [MAIN, 'revive', ...options.paths, '--yes'];
    if (options.agents !== undefined) args.push('--agents', options.agents);
    const env: Record<string, string | undefined> = { ...options.env, NO_COLOR: '1' };
    delete env.FORCE_COLOR;
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const current: Revive = { child, events: [] };
    revive = current;
    const emit = (event: string, data: string): void => {
      current.events.push(send(event, data));
    };
    emit('progress', `$ llm-agent revive ${options.paths.join(' ')} --yes`);
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const text of lines) emit('progress', text);
      });
      stream.on('end', () => {
        if (rest !== '') emit('progress', rest);
        rest = '';
      });
    }
    child.on('error', (error) => emit('progress', `could not start revive: ${error.message}`));
    child.on('close', (code, signal) => {
      send('done', code === null ? String(signal) : String(code));
      revive = undefined;
    });
    reply(response, 202, 'text/plain', 'revive started');
  }

  // Tell the pages when a transcript below the PATHs changes (polled: sizes and mtimes). The
  // baseline is taken now and only ever moved by a poll, so no change between two polls — nor
  // one made while no page listened — goes unannounced.
  let mtimes = await signature(options.paths, options.cwd).catch(() => '');
  let polling = false;
  const poll = setInterval(() => {
    if (polling || clients.size === 0) return;
    polling = true;
    signature(options.paths, options.cwd)
      .then((now) => {
        if (now !== mtimes) send('tree-changed', now.length.toString());
        mtimes = now;
      })
      .catch(() => undefined)
      .finally(() => {
        polling = false;
      });
  }, 1000);
  poll.unref();

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, '127.0.0.1', () => done());
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  // Cookies are per host, not per port: a name per port keeps two servers apart.
  cookieName = `llm_agent_ui_${port}`;

  return {
    url: `${origin}/?token=${token}`,
    port,
    token,
    async close() {
      clearInterval(poll);
      const running = revive;
      if (running !== undefined) {
        running.child.kill('SIGTERM');
        await new Promise<void>((done) => {
          if (running.child.exitCode !== null || running.child.signalCode !== null) done();
          else running.child.once('close', () => done());
        });
      }
      for (const client of clients) client.end();
      clients.clear();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    },
  };
}

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
} as const;

function reply(response: ServerResponse, code: number, type: string, body: string): void {
  response.writeHead(code, { 'Content-Type': type });
  response.end(body);
}

/** Compared in constant time; absent never matches. */
function same(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieOf(request: IncomingMessage, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}

/** Every transcript below the PATHs with its size and mtime: changes when any of them does. */
async function signature(paths: string[], cwd: string): Promise<string> {
  const found = await findTranscripts(paths, cwd);
  const parts: string[] = [];
  for (const path of found) {
    const stats = await stat(path).catch(() => undefined);
    parts.push(`${path}:${stats?.size ?? -1}:${stats?.mtimeMs ?? -1}`);
  }
  return parts.join('\n');
}
