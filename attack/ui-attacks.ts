import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../test/cli/support/chromium.ts';
import { type CliChild, printedUrl, send, startCli } from '../test/cli/support/ui-child.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  callBodies,
  faultNotProven,
  interruptedRun,
  revivedCount,
  sleep,
  verdict,
  writeTranscript,
} from './support.ts';

/*
 * `llm-agent ui`, attacked as a web page and a local process would: another port of 127.0.0.1
 * that the user's browser visits, a host name rebound to 127.0.0.1, a form posted from
 * another site, paths that climb out, transcripts full of HTML and script opened in Chromium,
 * hundreds of event streams, a run with one enormous record. Nothing may start a revive but the
 * ui's own page, nothing may read a file outside the tree, nothing from a transcript may run
 * as script, and no request may stall the others.
 */

interface Ui {
  cli: CliChild;
  /** The URL printed, as given (with whatever it authorises). */
  url: string;
  /** Its origin: http://127.0.0.1:PORT. */
  base: string;
  transcript: string;
}

/** A tree with one revivable run, served by `llm-agent ui`. */
async function startUi(context: AttackContext, bodies = interruptedRun()): Promise<Ui> {
  const transcript = join(context.folder, 'runs', 'main.jsonl');
  await writeTranscript(transcript, bodies);
  const cli = startCli(['ui', 'runs', '--agents', AGENTS_MODULE], context.folder);
  const url = await printedUrl(cli, 60_000);
  return { cli, url, base: new URL(url).origin, transcript };
}

async function stopUi(ui: Ui | undefined): Promise<void> {
  if (ui === undefined || ui.cli.child.exitCode !== null) return;
  ui.cli.child.kill('SIGTERM');
  const timer = setTimeout(() => ui.cli.child.kill('SIGKILL'), 10_000);
  await ui.cli.exited;
  clearTimeout(timer);
}

/** The page's own token and cookies, as the ui's page gets them by opening the printed URL. */
async function pageSession(ui: Ui): Promise<{ cookie: string; token: string }> {
  const reply = await send(ui.url);
  const cookie = [reply.headers['set-cookie'] ?? []]
    .flat()
    .map((line) => line.split(';')[0])
    .join('; ');
  const token = /<meta name="llm-agent-token" content="([^"]*)"/.exec(reply.body)?.[1] ?? '';
  return { cookie, token };
}

/** The link of the tree page to the run `main` (its path as the tree names it). */
async function runHref(ui: Ui, session: { cookie: string }): Promise<string> {
  const tree = await send(`${ui.base}/`, { headers: { Cookie: session.cookie } });
  const href = /href="(\/run\?path=[^"]*main\.jsonl)"/.exec(tree.body)?.[1];
  return (href ?? '/run?path=main.jsonl').replaceAll('&amp;', '&');
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    }),
  );
}

/** VmHWM of a process, in MB (0 once it is gone). */
function peakMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
}

const tokenToOtherPort: Attack = {
  name: 'ui-token-to-other-port',
  family: 'ui',
  full: true,
  awaits: 'ui',
  what: 'the user opens the ui in Chromium, then a page served by another process on another port of 127.0.0.1: what that server receives must neither read the ui nor start a revive',
  timeoutMs: 180_000,
  async run(context) {
    let ui: Ui | undefined;
    const received: string[] = [];
    const other = createServer((request, response) => {
      received.push(request.headers.cookie ?? '');
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<!doctype html><title>another local server</title><p>hello');
    });
    const browser = await launchChromium();
    try {
      ui = await startUi(context);
      const otherPort = await listen(other);
      const page = await browser.newPage();
      const shown = await page.goto(ui.url);
      if (shown?.status() !== 200) return faultNotProven(`the ui page answered ${shown?.status()}`);
      await page.goto(`http://127.0.0.1:${otherPort}/`);
      if (received.length === 0) return faultNotProven('the browser never reached the other port');
      const pairs = received
        .flatMap((header) => header.split(';'))
        .map((pair) => pair.trim())
        .filter((pair) => pair !== '');
      const tries: string[] = [];
      for (const pair of pairs) {
        const value = pair.slice(pair.indexOf('=') + 1);
        const post = await send(`${ui.base}/revive`, {
          method: 'POST',
          headers: { Cookie: pair, 'X-LLM-Agent-Token': value },
        });
        tries.push(`POST with ${pair.split('=')[0]}: ${post.status}`);
        const got = await send(`${ui.base}/`, { headers: { Cookie: pair } });
        tries.push(`GET / with it: ${got.status}`);
        const metaToken = /<meta name="llm-agent-token" content="([^"]*)"/.exec(got.body)?.[1];
        if (got.status === 200 && metaToken !== undefined) {
          const second = await send(`${ui.base}/revive`, {
            method: 'POST',
            headers: { Cookie: pair, 'X-LLM-Agent-Token': metaToken },
          });
          tries.push(`POST with the page's token: ${second.status}`);
        }
      }
      await sleep(2000);
      const revived = revivedCount(ui.transcript);
      const started = tries.some((line) => / 20\d$/.test(line) && line.startsWith('POST'));
      const readPage = tries.some((line) => line.startsWith('GET') && line.endsWith(' 200'));
      return verdict(
        !started && !readPage && revived === 0,
        `the other port received ${pairs.length} cookie(s) (${pairs.map((pair) => pair.split('=')[0]).join(', ') || 'none'}); ${tries.join('; ') || 'nothing to try'}; run-revived records: ${revived}`,
      );
    } finally {
      await browser.close();
      other.close();
      await stopUi(ui);
    }
  },
};

const hugeRecord: Attack = {
  name: 'ui-huge-record',
  family: 'ui',
  full: true,
  awaits: 'ui',
  what: "a run whose one tool result is 48 MB: while its page is asked for (in four tabs' worth of requests), a 3 KB script is still served at once and the server's memory stays bounded",
  timeoutMs: 240_000,
  alone: true,
  async run(context) {
    const megabytes = context.quick ? 24 : 48;
    const { call, dispatch } = callBodies('call_big', 'effect', { what: 'big' }, 'read-only');
    const bodies = [
      ...interruptedRun().slice(0, 2),
      call,
      dispatch,
      {
        type: 'message' as const,
        role: 'tool' as const,
        content: [
          {
            type: 'tool-result' as const,
            callId: 'call_big',
            toolName: 'effect',
            output: 'x'.repeat(megabytes * 1_000_000),
            isError: false,
          },
        ],
      },
      { type: 'tool-settled' as const, callId: 'call_big', status: 'completed' as const },
    ];
    let ui: Ui | undefined;
    try {
      ui = await startUi(context, bodies);
      const session = await pageSession(ui);
      const headers = { Cookie: session.cookie };
      const timed = async (path: string) => {
        const began = performance.now();
        const reply = await send(`${ui?.base}${path}`, { headers });
        return {
          status: reply.status,
          ms: Math.round(performance.now() - began),
          bytes: reply.body.length,
        };
      };
      const baseline = await timed('/app.js');
      const runPage = await runHref(ui, session);
      const pages = [0, 1, 2, 3].map(() =>
        timed(runPage).catch(() => ({ status: 0, ms: 0, bytes: 0 })),
      );
      await sleep(200);
      const during = await timed('/app.js');
      const rendered = await Promise.all(pages);
      const peak = peakMb(ui.cli.child.pid);
      if (readFileSync(ui.transcript).length < megabytes * 1_000_000)
        return faultNotProven('the transcript does not hold the huge record');
      const held =
        during.status === 200 &&
        during.ms <= baseline.ms + 1000 &&
        peak <= 500 &&
        rendered.every((reply) => reply.status === 200);
      return verdict(
        held,
        `${megabytes} MB record: /app.js alone ${baseline.ms} ms, while 4 run pages render ${during.ms} ms; run pages ${rendered.map((reply) => `${reply.status} in ${reply.ms} ms`).join(', ')}; ui peak RSS ${peak} MB`,
      );
    } finally {
      await stopUi(ui);
    }
  },
};

const dnsRebinding: Attack = {
  name: 'ui-dns-rebinding',
  family: 'ui',
  what: 'requests with the right token under another Host (a name rebound to 127.0.0.1): refused, the page and /revive alike',
  async run(context) {
    let ui: Ui | undefined;
    try {
      ui = await startUi(context);
      const session = await pageSession(ui);
      const port = new URL(ui.base).port;
      const host = `attacker.example:${port}`;
      const get = await send(ui.url, { headers: { Host: host } });
      const post = await send(`${ui.base}/revive`, {
        method: 'POST',
        headers: { Host: host, Cookie: session.cookie, 'X-LLM-Agent-Token': session.token },
      });
      const own = await send(ui.url);
      if (own.status !== 200) return faultNotProven(`the ui's own URL answered ${own.status}`);
      await sleep(1000);
      return verdict(
        get.status >= 400 && post.status >= 400 && revivedCount(ui.transcript) === 0,
        `Host ${host}: GET ${get.status}, POST /revive ${post.status} (own Host: ${own.status}); run-revived records: ${revivedCount(ui.transcript)}`,
      );
    } finally {
      await stopUi(ui);
    }
  },
};

const crossSiteRevive: Attack = {
  name: 'ui-cross-site-revive',
  family: 'ui',
  full: true,
  what: "a page on another port posts a form to /revive after the user opened the ui, and plain requests carry the page's token from a foreign Origin: nothing starts",
  timeoutMs: 180_000,
  async run(context) {
    let ui: Ui | undefined;
    const browser = await launchChromium();
    const attacker = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        `<!doctype html><form id=f method=POST action="${ui?.base}/revive"><input name=x value=1></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    try {
      ui = await startUi(context);
      const session = await pageSession(ui);
      const port = await listen(attacker);
      const page = await browser.newPage();
      if ((await page.goto(ui.url))?.status() !== 200) return faultNotProven('the ui did not load');
      let formAnswer = 0;
      page.on('response', (response) => {
        if (response.url().endsWith('/revive')) formAnswer = response.status();
      });
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForURL(`${ui.base}/revive`, { timeout: 15_000 }).catch(() => undefined);
      if (formAnswer === 0) return faultNotProven('the form never reached /revive');
      const foreign = await send(`${ui.base}/revive`, {
        method: 'POST',
        headers: {
          Origin: 'http://attacker.example',
          Cookie: session.cookie,
          'X-LLM-Agent-Token': session.token,
        },
      });
      const cookieOnly = await send(`${ui.base}/revive`, {
        method: 'POST',
        headers: { Cookie: session.cookie },
      });
      await sleep(1500);
      const revived = revivedCount(ui.transcript);
      return verdict(
        formAnswer >= 400 && foreign.status >= 400 && cookieOnly.status >= 400 && revived === 0,
        `form from another port: ${formAnswer}; token from a foreign Origin: ${foreign.status}; the cookie alone: ${cookieOnly.status}; run-revived records: ${revived}`,
      );
    } finally {
      await browser.close();
      attacker.close();
      await stopUi(ui);
    }
  },
};

const pathTraversal: Attack = {
  name: 'ui-path-traversal',
  // Written for the cookie scheme; the web view now keeps its token in the path (/TOKEN/):
  // held out of the quick form until it is rewritten for that.
  full: true,
  family: 'ui',
  what: 'run paths and URLs that climb out of the tree (../, encoded, absolute): never a file outside it',
  async run(context) {
    let ui: Ui | undefined;
    try {
      ui = await startUi(context);
      const session = await pageSession(ui);
      const headers = { Cookie: session.cookie };
      const paths = [
        '/run?path=../../../../etc/passwd',
        '/run?path=%2Fetc%2Fpasswd',
        '/run?path=..%2F..%2F..%2Fetc%2Fpasswd',
        '/../../../../etc/passwd',
        '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
        '/run?path=main.jsonl%00../../etc/passwd',
      ];
      const seen: string[] = [];
      let leaked = false;
      for (const path of paths) {
        const reply = await send(`${ui.base}${path}`, { headers });
        leaked ||= /root:x?:0:0/.test(reply.body);
        seen.push(`${path} → ${reply.status}`);
      }
      const own = await send(`${ui.base}${await runHref(ui, session)}`, { headers });
      if (own.status !== 200) return faultNotProven(`the run's own page answered ${own.status}`);
      return verdict(
        !leaked,
        `${seen.join('; ')}; ${leaked ? '/etc/passwd LEAKED' : 'nothing outside the tree served'}`,
      );
    } finally {
      await stopUi(ui);
    }
  },
};

const scriptInTranscript: Attack = {
  name: 'ui-script-in-transcript',
  family: 'ui',
  full: true,
  what: 'labels, tasks, tool names and file names full of HTML and script, rendered in Chromium: nothing runs, nothing leaves the page',
  timeoutMs: 180_000,
  async run(context) {
    const payloads = [
      `<img src=x onerror="window.__pwned=1">`,
      `</script><script>window.__pwned=2</script>`,
      `"><svg onload=window.__pwned=3>`,
      `javascript:window.__pwned=4`,
    ] as const;
    await writeTranscript(
      join(context.folder, 'runs', `"><img src=x onerror=window.__pwned=5>.jsonl`),
      interruptedRun({ agentId: 'other', label: payloads[2], task: payloads[3] }),
    );
    let ui: Ui | undefined;
    const browser = await launchChromium();
    try {
      ui = await startUi(context, interruptedRun({ label: payloads[0], task: payloads[1] }));
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      const dialogs: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(`${ui?.base}/`)) elsewhere.push(request.url());
      });
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(ui.url);
      const html = await page.content();
      if (!html.includes('onerror')) return faultNotProven('the payload is not on the page');
      await page.goto(`${ui.base}${await runHref(ui, await pageSession(ui))}`);
      await sleep(500);
      const pwned = await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned ?? null);
      return verdict(
        pwned === null && dialogs.length === 0 && elsewhere.length === 0,
        `payloads on the tree and run pages; window.__pwned ${pwned ?? 'unset'}; dialogs ${dialogs.length}; requests elsewhere ${elsewhere.length}`,
      );
    } finally {
      await browser.close();
      await stopUi(ui);
    }
  },
};

const eventFlood: Attack = {
  name: 'ui-event-stream-flood',
  // Written for the cookie scheme; the web view now keeps its token in the path (/TOKEN/):
  // held out of the quick form until it is rewritten for that.
  full: true,
  family: 'ui',
  what: '300 event streams held open at once: the page is still served promptly and the ui stays up',
  async run(context) {
    let ui: Ui | undefined;
    const streams: import('node:http').ClientRequest[] = [];
    try {
      ui = await startUi(context);
      const session = await pageSession(ui);
      const baselineStart = performance.now();
      await send(`${ui.base}/`, { headers: { Cookie: session.cookie } });
      const baseline = performance.now() - baselineStart;
      const { request } = await import('node:http');
      let opened = 0;
      for (let index = 0; index < 300; index++) {
        const stream = request(
          `${ui.base}/events`,
          { headers: { Cookie: session.cookie } },
          (response) => {
            if (response.statusCode === 200) opened += 1;
            response.resume();
          },
        );
        stream.on('error', () => undefined);
        stream.end();
        streams.push(stream);
      }
      await sleep(2000);
      if (opened === 0) return faultNotProven('no event stream opened');
      const began = performance.now();
      const reply = await send(`${ui.base}/`, { headers: { Cookie: session.cookie } }).catch(
        () => ({ status: 0 }),
      );
      const ms = performance.now() - began;
      return verdict(
        reply.status === 200 && ms <= baseline + 5000 && ui.cli.child.exitCode === null,
        `${opened} of 300 streams open; / answered ${reply.status} in ${Math.round(ms)} ms (alone ${Math.round(baseline)} ms); ui ${ui.cli.child.exitCode === null ? 'up' : 'gone'}`,
      );
    } finally {
      for (const stream of streams) stream.destroy();
      await stopUi(ui);
    }
  },
};

const noToken: Attack = {
  name: 'ui-forged-token',
  family: 'ui',
  what: 'every route without the token, with a forged one of the same length, with the token in another header: refused',
  async run(context) {
    let ui: Ui | undefined;
    try {
      ui = await startUi(context);
      const session = await pageSession(ui);
      if (session.token === '' && session.cookie === '')
        return faultNotProven('the ui gave no session');
      const forged = (session.token || 'a'.repeat(64)).replace(/./g, (character) =>
        character === 'a' ? 'b' : 'a',
      );
      const seen: string[] = [];
      let leaked = false;
      for (const path of ['/', '/app.js', '/events', await runHref(ui, session)]) {
        for (const [label, headers] of [
          ['none', {}],
          ['forged cookie', { Cookie: session.cookie.replace(/=[^;]*/g, `=${forged}`) }],
          ['forged header', { 'X-LLM-Agent-Token': forged }],
          ['token as Authorization', { Authorization: `Bearer ${session.token}` }],
        ] as [string, Record<string, string>][]) {
          const reply = await new Promise<{ status: number }>((resolve) => {
            void send(`${ui?.base}${path}`, { headers }).then(resolve, () =>
              resolve({ status: 0 }),
            );
            setTimeout(() => resolve({ status: -1 }), 3000);
          });
          if (reply.status === 200) {
            leaked = true;
            seen.push(`${path} with ${label}: 200`);
          }
        }
      }
      const post = await send(`${ui.base}/revive`, {
        method: 'POST',
        headers: { 'X-LLM-Agent-Token': forged },
      });
      return verdict(
        !leaked && post.status >= 400,
        `${leaked ? seen.join('; ') : 'every route refused without the token'}; POST /revive with a forged token: ${post.status}`,
      );
    } finally {
      await stopUi(ui);
    }
  },
};

/** The attacks on `llm-agent ui`. */
export const UI_ATTACKS: Attack[] = [
  tokenToOtherPort,
  hugeRecord,
  dnsRebinding,
  crossSiteRevive,
  pathTraversal,
  scriptInTranscript,
  eventFlood,
  noToken,
];
