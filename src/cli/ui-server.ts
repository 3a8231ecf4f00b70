/**
 * The server behind `llm-agent ui`: a local web view of a {@link UiSource}'s runs — the tree
 * (`/`) and each run's conversation (`/run?path=…`), drawn by the `show --html` renderer and
 * read again on each request — the plan, and a Confirm button that runs the plan's command in
 * a child process, its output streamed to the page as server-sent events. A page of 1,000 runs
 * holds their tree, not their 1,000 conversations.
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
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { escapeHtml, type RunRecords, runTreeHtml } from '../render/conversation-html.ts';
import { EXIT } from '../render/exit-codes.ts';
import type { NotRead } from '../runs/find-transcripts.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';
import type { UiAction, UiSource } from './ui-source.ts';

/**
 * What {@link startUiServer} serves.
 *
 * @example
 * const options: UiServerOptions = { source: fileUiSource(['runs/'], cwd), cwd, env: process.env, port: 0 };
 */
export interface UiServerOptions {
  /** Where the runs come from, and what confirming does to them. */
  source: UiSource;
  /** The working folder of the command a Confirm runs. */
  cwd: string;
  /** The environment of that command. */
  env: Record<string, string | undefined>;
  /** The port to listen on, 0 for any free one. */
  port: number;
  /** How often the runs are checked for a change, in milliseconds (default 1000). */
  pollMs?: number;
  /**
   * The program a Confirm starts, given the action's arguments after it (default: this Node
   * and the CLI next to this module).
   */
  command?: string[];
}

/**
 * A running UI server.
 *
 * @example
 * const server = await startUiServer({ source: fileUiSource(['runs/'], cwd), cwd, env: process.env, port: 0 });
 * console.log(server.url); // http://127.0.0.1:PORT/?token=…
 * await server.close();
 */
export interface UiServer {
  /** The URL to open, token included. */
  url: string;
  port: number;
  token: string;
  /**
   * Stops listening, ends the event streams, stops (SIGTERM) a command still running, and
   * closes the source.
   */
  close(): Promise<void>;
}

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The CLI next to this module: main.ts from the sources, main.js from dist. */
const MAIN = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './main.js', import.meta.url),
);

/**
 * The page's script: no inline script anywhere, every text from the server set as text. It
 * streams the command's output into the log, and redraws the page (the filter chosen and the
 * folds opened kept) when the server says the runs changed.
 */
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
  // One redraw at a time: a change announced while one is under way asks for one more after
  // it, however many changes came (a busy tree announces often; each redraw reads it whole).
  var redrawing = false;
  var again = false;
  function refresh() {
    if (redrawing) {
      again = true;
      return;
    }
    redrawing = true;
    fetch(location.pathname + location.search, { credentials: 'same-origin' })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, 'text/html');
        var chosen = document.querySelector('#filters input:checked');
        var opened = [];
        document.querySelectorAll('main details').forEach(function (fold, index) {
          if (fold.open) opened.push(index);
        });
        ['header', 'main', '#revive'].forEach(function (selector) {
          var now = document.querySelector(selector);
          var next = fresh.querySelector(selector);
          if (now && next) now.replaceWith(document.adoptNode(next));
        });
        if (chosen) {
          var same = document.getElementById(chosen.id);
          if (same) same.checked = true;
        }
        var folds = document.querySelectorAll('main details');
        opened.forEach(function (index) { if (folds[index]) folds[index].open = true; });
        bind();
        document.body.setAttribute('data-refreshed', String(Date.now()));
      })
      .catch(function () { /* the page stays as it was until the next change */ })
      .finally(function () {
        redrawing = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }
  function bind() {
    var button = document.getElementById('confirm');
    if (!button) return;
    button.addEventListener('click', function () {
      button.disabled = true;
      reviving = true;
      status.textContent = 'running…';
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
      }).catch(function () {
        reviving = false;
        status.textContent = 'the server could not be reached: nothing was started';
        button.disabled = false;
      });
    });
  }
  var events = new EventSource('/events');
  // After a dropped stream the page may have missed a change: it redraws once reconnected.
  var opened = false;
  events.addEventListener('open', function () {
    if (opened) refresh();
    opened = true;
    document.body.setAttribute('data-events', 'open');
  });
  events.addEventListener('progress', function (event) { line(event.data); });
  events.addEventListener('done', function (event) {
    var end = JSON.parse(event.data);
    reviving = false;
    line(end.line);
    status.textContent = end.line;
    status.className = end.ok ? 'ended' : 'failed';
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
#revive.brief{border-width:1px;padding:0 .8rem}#revive.brief:empty{display:none}
#activity:has(#log:empty):has(#revive-status:empty){display:none}
#revive-status.ended{color:#2b8a3e}#revive-status.failed{color:#c92a2a}
#revive pre{background:#fff;padding:.4rem}
#log{font-family:ui-monospace,monospace;font-size:12.5px;white-space:pre-wrap;max-height:20rem;overflow:auto;background:#fff;padding:.4rem}
button{font-size:14px;padding:.3rem 1rem}
</style>`;

/** The command in progress. */
interface Running {
  child: ChildProcess;
}

/**
 * Start the server on 127.0.0.1 (see the module comment for what it serves and refuses).
 *
 * @example
 * const server = await startUiServer({ source: fileUiSource(['runs/'], cwd), cwd, env: process.env, port: 0 });
 * process.stdout.write(`${server.url}\n`);
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { source } = options;
  const token = randomBytes(32).toString('hex');
  const clients = new Set<ServerResponse>();
  let running: Running | undefined;
  let origin = '';
  let cookieName = '';

  // The last command's events, numbered: a page that connects later is sent them all, one
  // that reconnects (its EventSource says the last id it saw) only what it missed.
  let logged: { id: number; frame: string }[] = [];
  let lastId = 0;
  let closing = false;
  // Confirms still making their plan: close() lets them answer (503) before it shuts the door.
  const starts = new Set<Promise<void>>();
  const send = (event: string, data: string, keep = false): void => {
    if (keep) lastId += 1;
    const id = keep ? lastId : 0;
    const frame = `${keep ? `id: ${id}\n` : ''}event: ${event}\n${data
      .split(/\r\n|\r|\n/)
      .map((part) => `data: ${part}`)
      .join('\n')}\n\n`;
    if (keep) logged.push({ id, frame });
    for (const client of clients) client.write(frame);
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
      const starting = startCommand(response);
      starts.add(starting);
      try {
        await starting;
      } finally {
        starts.delete(starting);
      }
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      reply(response, 405, 'text/plain', 'method not allowed');
      return;
    }
    switch (url.pathname) {
      case '/':
      case '/run': {
        const run = url.pathname === '/' ? undefined : (url.searchParams.get('path') ?? '');
        const html = await page(run);
        if (html === undefined) reply(response, 404, 'text/plain', 'no such run in this tree');
        else reply(response, 200, 'text/html; charset=utf-8', html);
        return;
      }
      case '/app.js':
        reply(response, 200, 'text/javascript; charset=utf-8', APP_JS);
        return;
      case '/events':
        openEvents(request, response);
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

  /**
   * The tree with the plan (`run` undefined), or the tree with the conversation of the run
   * whose path is `run` — undefined when the tree has no such run: a path from the URL is
   * only ever compared with the tree's, never opened.
   */
  async function page(run: string | undefined): Promise<string | undefined> {
    const { roots, notRead } = await source.tree();
    let shown: RunNode | undefined;
    if (run !== undefined) {
      shown = [...walkTree(roots)].find((node) => node.path === run);
      if (shown === undefined) return undefined;
    }
    const read = new Map<string, RunRecords>();
    if (shown !== undefined) read.set(shown.path, await source.records(shown));
    const action = await source.action(roots);
    return runTreeHtml(roots, read, {
      generatedAt: new Date().toISOString(),
      sections: shown === undefined ? [] : [shown],
      href: (node) => `/run?path=${encodeURIComponent(node.path)}`,
      served: {
        madeBy: 'llm-agent ui',
        head: `<meta name="llm-agent-token" content="${token}">\n${EXTRA_STYLE}`,
        headerEnd: `${notReadHtml(notRead)}${shown === undefined ? '' : '<p><a href="/">← the whole tree</a></p>'}`,
        afterHeader: `${actionHtml(action, shown !== undefined)}\n${activityHtml()}`,
        bodyEnd: '<script src="/app.js"></script>',
      },
    });
  }

  /**
   * The plan and its Confirm button; on a run's page (`brief`), one line linking to them, so
   * that the conversation comes first and nothing is confirmed without the plan in view.
   */
  function actionHtml(action: UiAction, brief: boolean): string {
    if (brief) {
      const count = `${action.runs} run${action.runs === 1 ? '' : 's'}`;
      return `<section id="revive" class="brief">${
        action.runs === 0
          ? ''
          : `<p>${count} to ${action.verb}: <a href="/#revive">the plan, and Confirm</a></p>`
      }</section>`;
    }
    const title = action.verb === 'revive' ? 'Revive…' : 'Approve…';
    const shown = action.shown ?? `llm-agent ${action.argv.join(' ')}`;
    const count = `${action.runs} run${action.runs === 1 ? '' : 's'}`;
    const effect =
      action.verb === 'revive'
        ? 'nothing is spent before you confirm.'
        : 'nothing is approved before you confirm; a worker then revives each run once.';
    return [
      '<section id="revive">',
      `<h2>${title}</h2>`,
      `<pre id="plan">${escapeHtml(action.text)}</pre>`,
      action.runs === 0
        ? ''
        : `<p>Runs <code>${escapeHtml(shown)}</code>: ${effect}</p>\n<button id="confirm" type="button"${running === undefined ? '' : ' disabled'}>Confirm: ${action.verb} ${count}</button>`,
      '</section>',
    ].join('\n');
  }

  function activityHtml(): string {
    return [
      '<section id="activity">',
      `<h2>Activity <span id="revive-status">${running === undefined ? '' : 'running…'}</span></h2>`,
      '<div id="log" aria-live="polite"></div>',
      '</section>',
    ].join('\n');
  }

  function openEvents(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    response.write(': connected\n\n');
    const seenId = Number(request.headers['last-event-id'] ?? 0);
    for (const { id, frame } of logged) {
      if (!(id <= seenId)) response.write(frame);
    }
    clients.add(response);
    response.on('close', () => clients.delete(response));
  }

  async function startCommand(response: ServerResponse): Promise<void> {
    if (running !== undefined) {
      reply(response, 409, 'text/plain', 'a revive is already running');
      return;
    }
    // The plan is made again now: what is confirmed is what is there, not an older page.
    const action = await source.action((await source.tree()).roots);
    // Checked again after the wait: two POSTs at once start one command, and none starts
    // once the server is closing (nothing would stop it).
    if (closing) {
      reply(response, 503, 'text/plain', 'the server is stopping');
      return;
    }
    if (running !== undefined) {
      reply(response, 409, 'text/plain', 'a revive is already running');
      return;
    }
    if (action.runs === 0) {
      reply(response, 409, 'text/plain', 'nothing to revive');
      return;
    }
    const [program, ...before] = options.command ?? [process.execPath, MAIN];
    const env: Record<string, string | undefined> = { ...options.env, NO_COLOR: '1' };
    delete env.FORCE_COLOR;
    // A process group of its own: Ctrl-C in the ui's terminal reaches the ui, which stops the
    // command once, cleanly (a second signal would make revive give up at once).
    const child = spawn(program as string, [...before, ...action.argv], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    if (child.pid === undefined) {
      child.once('error', () => undefined);
      reply(response, 500, 'text/plain', 'the command could not be started');
      return;
    }
    const current: Running = { child };
    running = current;
    // In a group of its own the command no longer hears the terminal: if the ui's process ends
    // without closing (a second Ctrl-C, a crash), the command is told to stop on the way out.
    const onExit = (): void => stopGroup(child);
    process.once('exit', onExit);
    child.once('close', () => process.off('exit', onExit));
    logged = [];
    send('progress', `$ ${action.shown ?? `llm-agent ${action.argv.join(' ')}`}`, true);
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const text of lines) send('progress', text, true);
      });
      stream.on('end', () => {
        if (rest !== '') send('progress', rest, true);
        rest = '';
      });
    }
    child.on('error', (error) => send('progress', `could not run: ${error.message}`, true));
    child.on('close', (code, signal) => {
      send('done', JSON.stringify(endedLine(action.verb, code, signal)), true);
      running = undefined;
    });
    reply(response, 202, 'text/plain', `${action.verb} started`);
  }

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, '127.0.0.1', () => done());
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  // Cookies are per host, not per port: a name per port keeps two servers apart.
  cookieName = `llm_agent_ui_${port}`;

  // Tell the pages when the runs change: checked every second, and 100 ms after the source
  // says something may have changed (a burst of writes is one check). The baseline is taken
  // before any check compares with it, and only ever moved by a check, so no change between
  // two checks — nor one made while no page listened — goes unannounced. The watch starts
  // first: the baseline's reading may be what tells it where to look.
  let seen: string | undefined;
  let checking = false;
  let again = false;
  const check = (): void => {
    if (seen === undefined || clients.size === 0) return;
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    source
      .signature()
      .then((now) => {
        if (now !== seen) send('tree-changed', now.length.toString());
        seen = now;
      })
      .catch(() => undefined)
      .finally(() => {
        checking = false;
        if (again) {
          again = false;
          check();
        }
      });
  };
  let soon: NodeJS.Timeout | undefined;
  const unwatch = source.watch?.(() => {
    soon ??= setTimeout(() => {
      soon = undefined;
      check();
    }, 100);
  });
  seen = await source.signature().catch(() => '');
  const poll = setInterval(check, options.pollMs ?? 1000);
  poll.unref();

  let closed: Promise<void> | undefined;
  return {
    url: `${origin}/?token=${token}`,
    port,
    token,
    close() {
      closed ??= shutDown();
      return closed;
    },
  };

  async function shutDown(): Promise<void> {
    closing = true;
    clearInterval(poll);
    clearTimeout(soon);
    unwatch?.();
    // A Confirm making its plan answers 503 now; one that does not within 5 s is cut off.
    await Promise.race([
      Promise.allSettled([...starts]),
      new Promise((done) => setTimeout(done, 5000).unref()),
    ]);
    const current = running;
    if (current !== undefined) {
      stopGroup(current.child);
      await new Promise<void>((done) => {
        if (current.child.exitCode !== null || current.child.signalCode !== null) done();
        else current.child.once('close', () => done());
      });
    }
    for (const client of clients) client.end();
    clients.clear();
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    await source.close();
  }
}

/**
 * Stop a command's process group, once (revive takes a second signal as "give up at once").
 * Its group is its own (it was started detached), so this reaches what it started too.
 */
function stopGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
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

/** What each exit code of `revive` means, for the page (docs/cli.md lists them). */
const REVIVE_ENDINGS: Partial<Record<number, string>> = {
  [EXIT.failure]: 'a revival or a revived run failed; the log above says which',
  [EXIT.usage]: 'the command was refused; the log above says why',
  [EXIT.unreadable]: 'nothing to revive, and a transcript is unreadable',
  [EXIT.claimed]: 'another reviver holds the tree; nothing was written',
  [EXIT.interrupted]: 'stopped; the runs stay revivable',
};

/**
 * The line that ends a command's log — `revive ended (exit code 0)` when it succeeded, else
 * what the code means; a signal is said as one — and whether it succeeded.
 */
function endedLine(
  verb: UiAction['verb'],
  code: number | null,
  signal: string | null,
): { line: string; ok: boolean } {
  if (code === null) {
    return {
      line: `${verb} ended by ${signal ?? 'a signal'}: the runs stay as it left them`,
      ok: false,
    };
  }
  if (code === EXIT.ok) return { line: `${verb} ended (exit code 0)`, ok: true };
  const meaning = REVIVE_ENDINGS[code];
  return {
    line: `${verb} failed (exit code ${code}${meaning === undefined ? '' : `: ${meaning}`})`,
    ok: false,
  };
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
