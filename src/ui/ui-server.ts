/**
 * The server behind `llm-agent ui`: a local web view of a {@link UiSource}'s runs — the tree
 * (`/`) and each run's conversation (`/run?path=…`), drawn by the `show --html` renderer and
 * read again on each request — the plan, and a Confirm button that runs the plan's command in
 * a child process, its output streamed to the page as server-sent events. A page of 1,000 runs
 * holds their tree, not their 1,000 conversations.
 *
 * This file is the kernel: it listens, guards each request (`request-guard.ts`), routes it,
 * and closes. The pages are `ui-pages.ts`, the script `page/app.ts`, the events
 * `event-stream.ts`, the command `confirm-command.ts`, the change checks `change-announcer.ts`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announceChanges } from './change-announcer.ts';
import { ConfirmCommand } from './confirm-command.ts';
import { EventStream } from './event-stream.ts';
import { pageScriptText } from './page-script.ts';
import { type GuardKeys, guard, reply, SECURITY_HEADERS } from './request-guard.ts';
import { RunRenderPool } from './run-render-pool.ts';
import type { RenderLimits } from './render-job.ts';
import { SectionCache } from './section-cache.ts';
import { runSectionHere, servedValue } from './served-run.ts';
import { type SectionRenderer, uiPage } from './ui-pages.ts';
import type { RunNode } from '../render/run-node.ts';
import type { UiSource } from './ui-source.ts';

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
  /** Told each command a Confirm starts and how it ended (default: nobody). */
  log?: (line: string) => void;
  /** The words the commands shown start with, the way the user ran `llm-agent` (default that). */
  invocation?: string;
  /** How much of a run a page holds (default {@link DEFAULT_LIMITS}). */
  limits?: RenderLimits;
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
 * console.log(server.url); // http://127.0.0.1:PORT/TOKEN/
 * await server.close();
 */
export interface UiServer {
  /** The URL to open, `http://127.0.0.1:PORT/TOKEN/`: the token is its path, and every page's. */
  url: string;
  port: number;
  token: string;
  /**
   * Stops listening, ends the event streams, stops (SIGTERM) a command still running, and
   * closes the source.
   */
  close(): Promise<void>;
}

/**
 * How much of a run a page holds by default: values past 16 Ki characters keep their start in
 * the page and are served apart; the conversation is shown 200 messages a page.
 */
const DEFAULT_LIMITS: RenderLimits = { valueChars: 16_384, pageMessages: 200 };

/** What the request handlers share: the source, the keys, the streams, the command. */
interface Served {
  source: UiSource;
  limits: RenderLimits;
  /** Reads and renders the runs of a file source off the server's thread. */
  pool: RunRenderPool;
  /** The last sections rendered from files, while their transcripts are unchanged. */
  sections: SectionCache;
  keys: GuardKeys;
  events: EventStream;
  command: ConfirmCommand;
  /** The way the user ran `llm-agent`: the commands shown start with it. */
  invocation: string | undefined;
  script: string;
  /** Set once the server is closing: no command starts after. */
  closing: boolean;
  /** Confirms still making their plan: close() lets them answer (503) before it shuts. */
  starts: Set<Promise<void>>;
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
  const events = new EventStream();
  const served: Served = {
    source,
    limits: options.limits ?? DEFAULT_LIMITS,
    pool: new RunRenderPool(),
    sections: new SectionCache(4),
    keys: { origin: '', token: randomBytes(32).toString('hex') },
    events,
    command: new ConfirmCommand(
      {
        cwd: options.cwd,
        env: options.env,
        command: options.command,
        log: options.log,
        invocation: options.invocation,
      },
      events,
    ),
    invocation: options.invocation,
    script: await pageScriptText(),
    closing: false,
    starts: new Set(),
  };
  const server = createServer((request, response) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    handle(served, request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        reply(response, 500, 'text/plain', `internal error: ${String(error).split('\n')[0]}`);
      } else response.end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, '127.0.0.1', () => done());
  });
  const port = (server.address() as AddressInfo).port;
  served.keys.origin = `http://127.0.0.1:${port}`;
  const stopAnnouncing = await announceChanges(source, events, options.pollMs ?? 1000);
  // Started now, not at the first run's page: that page does not wait for a thread to start.
  if (source.files === true) served.pool.warm();

  const shutDown = async (): Promise<void> => {
    served.closing = true;
    stopAnnouncing();
    // A Confirm making its plan answers 503 now; one that does not within 5 s is cut off.
    await Promise.race([
      Promise.allSettled([...served.starts]),
      new Promise((done) => setTimeout(done, 5000).unref()),
    ]);
    await served.command.stop();
    events.endAll();
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    await served.pool.close();
    await source.close();
  };
  let closed: Promise<void> | undefined;
  return {
    url: `${served.keys.origin}/${served.keys.token}/`,
    port,
    token: served.keys.token,
    close() {
      closed ??= shutDown();
      return closed;
    },
  };
}

/** One request: guarded, then routed. */
async function handle(
  served: Served,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', served.keys.origin);
  const verdict = guard(request, url, served.keys);
  if (verdict.refuse !== undefined) {
    reply(response, verdict.refuse, 'text/plain', verdict.text);
    return;
  }
  if (request.method === 'POST') {
    await confirm(served, response);
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    reply(response, 405, 'text/plain', 'method not allowed');
    return;
  }
  await route(served, verdict.path, url, request, response);
}

/** A GET, by its path. */
async function route(
  served: Served,
  path: string,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  switch (path) {
    case '/':
    case '/run': {
      const run =
        path === '/'
          ? undefined
          : {
              path: url.searchParams.get('path') ?? '',
              page: Number(url.searchParams.get('page') ?? 1),
            };
      const context = {
        token: served.keys.token,
        running: served.command.running,
        section: sectionRenderer(served),
        invocation: served.invocation,
      };
      const html = await uiPage(served.source, run, context);
      if (html === undefined) reply(response, 404, 'text/plain', 'no such run in this tree');
      else reply(response, 200, 'text/html; charset=utf-8', html);
      return;
    }
    case '/value':
      await servedValue(served.source, served.pool, url, response);
      return;
    case '/app.js':
      reply(response, 200, 'text/javascript; charset=utf-8', served.script);
      return;
    case '/events':
      served.events.open(request, response);
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

/** POST /revive: the plan made again now, and its command started (or why not). */
async function confirm(served: Served, response: ServerResponse): Promise<void> {
  const starting = (async () => {
    if (served.command.running) {
      reply(response, 409, 'text/plain', 'a revive is already running');
      return;
    }
    // The plan is made again now: what is confirmed is what is there, not an older page.
    const action = await served.source.action((await served.source.tree()).roots);
    // Checked again after the wait: none starts once the server is closing (nothing would
    // stop it); two POSTs at once start one command (the runner refuses the second).
    if (served.closing) {
      reply(response, 503, 'text/plain', 'the server is stopping');
      return;
    }
    const refused = served.command.start(action);
    if (refused === undefined) reply(response, 202, 'text/plain', `${action.verb} started`);
    else reply(response, refused.status, 'text/plain', refused.text);
  })();
  served.starts.add(starting);
  try {
    await starting;
  } finally {
    served.starts.delete(starting);
  }
}

/** A run's section: from the worker for files, here for a store (its records come parsed). */
function sectionRenderer(served: Served): SectionRenderer {
  return async (node, parent, anchor, page) => {
    if (served.source.files === true) {
      const job = {
        kind: 'section' as const,
        anchor,
        page,
        limits: served.limits,
        node: shallow(node),
        parent: parent && shallow(parent),
      };
      // What the section shows besides the file: the run's facts, its parent's, the page.
      const request = JSON.stringify([job.anchor, job.page, job.node, job.parent ?? null]);
      return served.sections.get(
        node.path,
        request,
        async () => (await served.pool.run(job)) ?? '',
      );
    }
    return runSectionHere(served.source, node, parent, anchor, page, served.limits);
  };
}

/** A run as the worker needs it: its children without theirs (the tree is not sent whole). */
function shallow(node: RunNode): RunNode {
  return { ...node, children: node.children.map((child) => ({ ...child, children: [] })) };
}
