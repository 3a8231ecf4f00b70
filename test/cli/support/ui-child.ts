/**
 * What the tests of `llm-agent ui` share: the CLI as a child process that keeps running (the
 * ui, a worker) and the URL the ui prints; one HTTP request; a Chromium page watched for
 * every request it makes and everything it logs, and the checks made on that at the end; the
 * ui stopping on SIGTERM.
 */
import assert from 'node:assert/strict';
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Browser, Page } from 'playwright-core';
import { REPO } from './cli-fixtures.ts';

const NODE = join(REPO, 'node_modules/.bin/node');
const MAIN = join(REPO, 'src/cli/main.ts');

/** The environment of the CLI processes: the test's, without colour or debug output. */
function cliEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.FORCE_COLOR;
  delete env.NO_COLOR;
  delete env.LLM_AGENT_DEBUG;
  return env;
}

/** A running `llm-agent` process, its output collected as it comes. */
export interface CliChild {
  child: ChildProcessByStdio<null, Readable, Readable>;
  output: { stdout: string; stderr: string };
  /** Its exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/**
 * Start `llm-agent ...args` in `cwd` and leave it running (unlike runCli, which waits for the
 * end): the test stops it, and kills it in `after` if it is still there.
 */
export function startCli(args: string[], cwd: string): CliChild {
  const child = spawn(NODE, [MAIN, ...args], {
    cwd,
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output.stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output.stderr += chunk;
  });
  const exited = new Promise<number | NodeJS.Signals | null>((done) =>
    child.on('exit', (code, signal) => done(signal ?? code)),
  );
  return { child, output, exited };
}

/**
 * The first line the ui prints (its URL), within `ms`; a failure, with its stderr, if it exits
 * first or says nothing in time.
 */
export function printedUrl(ui: CliChild, ms = 15_000): Promise<string> {
  return new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`no URL in ${ms / 1000} s; stderr: ${ui.output.stderr}`)),
      ms,
    );
    const check = () => {
      if (ui.output.stdout.includes('\n')) {
        clearTimeout(timer);
        done(ui.output.stdout.split('\n')[0] as string);
      }
    };
    ui.child.stdout.on('data', check);
    check();
    void ui.exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`ui exited ${code}: ${ui.output.stderr}`));
    });
  });
}

/**
 * The parts of the URL the ui prints, asserting its form: loopback only, a port, and a token
 * of 64 hex digits as its path. `base` (`http://127.0.0.1:PORT/TOKEN`) is what every request
 * of its page must start with; `origin` is the server's without the token.
 */
export function uiAddress(url: string): { base: string; origin: string; token: string } {
  const match = /^http:\/\/127\.0\.0\.1:(\d+)\/([0-9a-f]{64})\/$/.exec(url);
  assert.ok(match, `the URL printed: ${url}`);
  const origin = `http://127.0.0.1:${match[1]}`;
  return { base: `${origin}/${match[2]}`, origin, token: match[2] as string };
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request with exactly the headers given (Origin, Host and Cookie included): no
 * browser adds or checks anything, so the server's own refusals are what is tested.
 */
export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((done, fail) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {}, timeout: 10_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          done({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timed out: ${url}`)));
    req.on('error', fail);
    req.end();
  });
}

/**
 * What a Chromium page did: every request it made and everything it logged, collected from
 * `attach` on, and the checks made on that once the browser is closed. Made before the page,
 * so that what was collected outlives the `try` that closes the browser.
 */
export class PageWatch {
  /** The URL of every request the page made. */
  readonly requests: string[] = [];
  /** Every console message (`type: text`) and uncaught error (`pageerror: message`). */
  readonly consoleLines: string[] = [];

  /**
   * A new page of `browser`, watched, with `timeoutMs` as its default wait, opened at the ui's
   * `url` and waited on until its event stream is open (the page is live).
   */
  async open(browser: Browser, url: string, timeoutMs: number): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(timeoutMs);
    this.attach(page);
    await page.goto(url);
    await page.waitForSelector('body[data-events="open"]');
    return page;
  }

  /** Start collecting; call before the page is opened. */
  attach(page: Page): void {
    page.on('request', (request) => this.requests.push(request.url()));
    page.on('console', (message) => this.consoleLines.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => this.consoleLines.push(`pageerror: ${error.message}`));
  }

  /**
   * The page stayed home: every request it made went to the server itself, under the token
   * (`base`, `http://127.0.0.1:PORT/TOKEN`) — but the browser's own `/favicon.ico` — and it
   * logged nothing but the reports of what the Content Security Policy blocked, which a
   * hostile page is meant to cause.
   */
  assertStayedHome(base: string): void {
    const favicon = `${new URL(base).origin}/favicon.ico`;
    for (const request of this.requests) {
      assert.ok(
        request.startsWith(`${base}/`) || request === favicon,
        `a request elsewhere: ${request}`,
      );
    }
    assert.deepEqual(
      this.consoleLines.filter((line) => !line.includes('Content Security Policy')),
      [],
      'nothing logged but CSP reports',
    );
  }

  /** Confirm reached the server: the page posted /revive. */
  assertPostedRevive(base: string): void {
    assert.ok(this.requests.includes(`${base}/revive`), 'the page posted /revive');
  }
}

/** Each screenshot was written into `folder`, and holds more than an empty image would. */
export function assertScreenshots(folder: string, names: string[]): void {
  for (const name of names) {
    const path = join(folder, name);
    assert.ok(existsSync(path) && statSync(path).size > 1000, `${path} was written`);
  }
}

/** SIGTERM stops the ui: it exits 0 within 10 s (a graceful stop, not a death by signal). */
export async function assertSigtermStops(ui: CliChild | undefined): Promise<void> {
  ui?.child.kill('SIGTERM');
  const code = await Promise.race([
    ui?.exited,
    new Promise((done) => setTimeout(() => done('timeout'), 10_000)),
  ]);
  assert.equal(code, 0, ui?.output.stderr);
}
