/*
 * `llm-agent show --html`: one self-contained, offline page of a run tree. Every string of a
 * transcript is untrusted: none becomes markup (checked on the text, then in a real Chromium:
 * nothing runs, nothing is requested but the file itself), control and bidi characters are
 * shown escaped, and the crash history (revivals, interrupted calls) is visible.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { escapeHtml } from '../../src/render/escape-html.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/index.ts';
import { launchChromium } from './support/chromium.ts';
import {
  FIXTURE,
  REPO,
  runCli,
  temporaryFolder,
  writeFixtureTree,
} from './support/cli-fixtures.ts';
import { HOSTILE_FILE, SCRIPT, writeHostileTree } from './support/hostile-transcripts.ts';

/** Screenshots and pages land here, for a person to look at after a run. */
const OUTPUT = join(REPO, 'test-output', 'show-html');

/** Tags and attributes the page itself may use: anything else came from a transcript. */
const TAGS = new Set([
  'time',
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'header',
  'h1',
  'h2',
  'p',
  'nav',
  'ul',
  'ol',
  'li',
  'a',
  'main',
  'section',
  'code',
  'div',
  'article',
  'span',
  'strong',
  'details',
  'summary',
  'pre',
  'fieldset',
  'legend',
  'label',
  'input',
]);
const ATTRIBUTES = new Set([
  'datetime',
  'title',
  'lang',
  'charset',
  'http-equiv',
  'content',
  'name',
  'aria-label',
  'class',
  'id',
  'href',
  'type',
  'checked',
  'open',
  'style',
]);

/**
 * Parse-level: every `<` of the page opens one of our own tags, with our own attributes (an
 * `href` only to an anchor of the page); the style sheet is ours; no raw control or bidi
 * character is left.
 */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

function assertNoMarkupFromTranscript(html: string): void {
  const styleStart = html.indexOf('<style>');
  const styleEnd = html.indexOf('</style>');
  assert.ok(styleStart > 0 && styleEnd > styleStart);
  assert.equal(html.indexOf('<style>', styleStart + 1), -1, 'one style sheet');
  const sheet = html.slice(styleStart, styleEnd);
  assert.doesNotMatch(sheet, /url\(|@import|evil/i, 'the style sheet is ours');
  const body = html.slice(0, styleStart) + html.slice(styleEnd);
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:="[^"<>]*")?)*)\s*>/g;
  let tags = 0;
  for (const match of body.matchAll(tag)) {
    tags += 1;
    const name = (match[2] as string).toLowerCase();
    assert.ok(TAGS.has(name), `a tag the page does not use: ${match[0]}`);
    for (const attribute of (match[3] as string).matchAll(/\s+([a-zA-Z-]+)(?:="([^"]*)")?/g)) {
      const attributeName = (attribute[1] as string).toLowerCase();
      assert.ok(ATTRIBUTES.has(attributeName), `an attribute the page does not use: ${match[0]}`);
      if (attributeName === 'href') {
        assert.match(attribute[2] ?? '', /^#run-\d+(-m\d+|-stopped)?$/, match[0]);
      }
      // The one style attribute: a timeline bar's width, a number of ours.
      if (attributeName === 'style') assert.match(attribute[2] ?? '', /^width:\d+\.\d%$/, match[0]);
      if (attributeName === 'open') assert.equal(attribute[2], undefined, match[0]);
      if (attributeName === 'type') assert.equal(attribute[2], 'radio', match[0]);
      // A time goes into an attribute only in the exact form the session writes.
      if (attributeName === 'datetime') assert.match(attribute[2] ?? '', ISO_TIME, match[0]);
      if (attributeName === 'title') {
        assert.match(attribute[2] ?? '', new RegExp(`^${ISO_TIME.source.slice(1, -1)} \\(UTC\\)$`));
      }
      if (attributeName === 'class' || attributeName === 'id') {
        assert.match(attribute[2] ?? '', /^[a-z0-9 -]+$/, match[0]);
      }
    }
  }
  const opened = body.split('<').length - 1;
  // The doctype is the one `<` that opens no tag.
  assert.equal(opened, tags + 1, 'every < opens a tag of the page; any other is escaped');
  assert.doesNotMatch(html, /<script|<img|<svg|<link|<iframe/i);
  assert.doesNotMatch(html.replace(/>[^<]*</g, '><'), /onerror|onload|javascript:/i);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw controls is the point
  assert.doesNotMatch(html, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
}

describe('llm-agent show --html', () => {
  let folder = '';
  let hostileHtml = '';
  let hostilePage = '';
  let demoPage = '';
  let crashedPage = '';
  before(async () => {
    folder = await temporaryFolder();
    await mkdir(OUTPUT, { recursive: true });
    await writeHostileTree(join(folder, 'hostile'));
    const hostile = await runCli(['show', '--html', join('hostile', `${HOSTILE_FILE}.jsonl`)], {
      cwd: folder,
    });
    assert.equal(hostile.code, 0, hostile.stderr);
    hostileHtml = hostile.stdout;
    hostilePage = join(OUTPUT, 'hostile.html');
    await writeFile(hostilePage, hostileHtml);

    // The offline demo: killed mid-write_file, revived, run to its end: the crash history.
    const demo = await runCli(['demo', 'demo'], { cwd: folder });
    assert.equal(demo.code, 0, demo.stdout + demo.stderr);
    const demoShown = await runCli(['show', '--html', join('demo', 'lead.jsonl')], { cwd: folder });
    assert.equal(demoShown.code, 0, demoShown.stderr);
    demoPage = join(OUTPUT, 'demo.html');
    await writeFile(demoPage, demoShown.stdout);

    // A tree whose process died and that nobody has revived yet.
    await writeFixtureTree(join(folder, 'fixture'));
    const crashed = await runCli(['show', '--html', join('fixture', 'runs', 'main.jsonl')], {
      cwd: folder,
    });
    assert.equal(crashed.code, 0, crashed.stderr);
    crashedPage = join(OUTPUT, 'crashed.html');
    await writeFile(crashedPage, crashed.stdout);
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('escapeHtml: the five characters, controls and bidi shown escaped', () => {
    assert.equal(escapeHtml(`&<>"'`), '&amp;&lt;&gt;&quot;&#39;');
    assert.equal(
      escapeHtml('<img src=x onerror="a()">'),
      '&lt;img src=x onerror=&quot;a()&quot;&gt;',
    );
    assert.equal(escapeHtml('a\u202eb\u2066c\u2069'), 'a\\u202eb\\u2066c\\u2069');
    assert.equal(escapeHtml('x\u001b[2J\u0000\r'), 'x\\x1b[2J\\x00\\r');
    assert.equal(escapeHtml('two\nlines\tkept'), 'two\nlines\tkept');
    assert.equal(escapeHtml('&amp;'), '&amp;amp;');
  });

  test('a hostile transcript: nothing of it becomes markup; all of it is shown as text', () => {
    assertNoMarkupFromTranscript(hostileHtml);
    assert.ok(
      hostileHtml.includes(
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'none'">`,
      ),
    );
    assert.ok(hostileHtml.includes('&lt;script&gt;window.__pwned=1&lt;/script&gt;'));
    assert.ok(hostileHtml.includes('&quot;&gt;&lt;svg onload=&quot;window.__pwned=1&quot;&gt;'));
    assert.ok(hostileHtml.includes('safe\\u202etxt.exe\\u202c \\u2066iso\\u2069'));
    assert.ok(hostileHtml.includes('bell\\x07 esc\\x1b[2J'));
    // The long output folds; both runs of the tree have their section.
    assert.match(hostileHtml, /<details><summary>/);
    assert.equal((hostileHtml.match(/<section class="run" id="run-\d+">/g) ?? []).length, 2);
    assert.match(hostileHtml, /written by the system \(background\)/);
  });

  test('refused with --database, and with --json', async () => {
    const database = await runCli(
      ['show', '--html', 'x', '--database', 'postgres://127.0.0.1:1/x'],
      { cwd: folder },
    );
    assert.equal(database.code, 2);
    assert.match(database.stderr, /--html reads transcript files/);
    assert.equal(database.stderr.trim().split('\n').length, 1, database.stderr);
    const json = await runCli(['show', '--html', '--json', join('demo', 'lead.jsonl')], {
      cwd: folder,
    });
    assert.equal(json.code, 2);
  });

  test('in Chromium: the tree, the labels, the crash history; the hostile page runs and fetches nothing', async () => {
    const browser = await launchChromium();
    try {
      // The demo's tree, revived after the crash: labels, states, the interrupted answer.
      const page = await browser.newPage();
      await page.goto(pathToFileURL(demoPage).href);
      const nav = (await page.locator('nav').textContent()) ?? '';
      assert.match(nav, /lead “Report” finished/);
      assert.match(nav, /“Coming back honestly” finished · revivals 1\/3/);
      assert.match(nav, /“Why runs die” finished/);
      const text = (await page.locator('main').textContent()) ?? '';
      assert.ok(text.includes(INTERRUPTED_MESSAGE.slice(0, 60)), 'the interrupted answer is shown');
      assert.match(text, /interrupted: answered by a revival/);
      assert.match(text, /resume notice/);
      assert.match(
        text,
        /revival #1 of 3: the process died after seq \d+; answered as interrupted/,
      );
      await page.screenshot({ path: join(OUTPUT, 'demo.png'), fullPage: true });

      // The fixture: a tree whose process died; the write in flight is flagged.
      await page.goto(pathToFileURL(crashedPage).href);
      const crashedNav = (await page.locator('nav').textContent()) ?? '';
      assert.match(crashedNav, /main “Main run” revivable · waiting on 2 children/);
      assert.match(
        crashedNav,
        /worker-call_s2 “B” revivable · 1 call in flight · revivals 0\/3 · open calls 1/,
      );
      const call = page.locator('.part.call.interrupted', { hasText: 'write_file' });
      assert.match(
        (await call.textContent()) ?? '',
        new RegExp(`${FIXTURE.writeCall}in flight when the process died`),
      );
      await page.screenshot({ path: join(OUTPUT, 'crashed.png'), fullPage: true });
      // The spawn call links its child's section, and the child links back to its parent.
      const spawned = page.locator('.part.call', { hasText: 'spawn_agent' }).filter({
        hasText: 'call_s2',
      });
      await spawned.locator('.runs a').click();
      assert.match(page.url(), /#run-2$/);
      const child = page.locator('section#run-2');
      assert.match((await child.locator('h2').textContent()) ?? '', /worker-call_s2 “B”/);
      assert.match(
        (await child.locator('.facts').textContent()) ?? '',
        /started by main “Main run” with call call_s2/,
      );
      await child.locator('.facts a').click();
      assert.match(page.url(), /#run-0$/);

      // Filters by state work in this page without script: its sections and its tree follow.
      const sections = page.locator('section.run');
      const visible = async (): Promise<number> =>
        (await sections.evaluateAll((all) => all.map((one) => one.checkVisibility()))).filter(
          Boolean,
        ).length;
      assert.equal(await visible(), 3);
      await page.check('#filter-finished');
      assert.equal(await visible(), 1);
      assert.equal(await page.locator('section#run-1').isVisible(), true);
      assert.equal(
        await page.locator('nav a', { hasText: FIXTURE.interruptedChild }).isVisible(),
        false,
      );
      await page.check('#filter-revivable');
      assert.equal(await visible(), 2);
      assert.equal(await page.locator('section#run-1').isVisible(), false);
      await page.close();

      // The hostile page: no script, no dialog, no request but the file itself.
      const hostile = await browser.newPage();
      const requests: string[] = [];
      const console: string[] = [];
      let dialogs = 0;
      hostile.on('request', (request) => requests.push(request.url()));
      hostile.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
      hostile.on('dialog', async (dialog) => {
        dialogs += 1;
        await dialog.dismiss();
      });
      const url = pathToFileURL(hostilePage).href;
      await hostile.goto(url);
      // Open every fold: what is inside is parsed and shown too.
      await hostile.locator('details').evaluateAll((all) => {
        for (const element of all) element.setAttribute('open', '');
      });
      await hostile.waitForTimeout(200);
      assert.equal(
        await hostile.evaluate(() => typeof (globalThis as { __pwned?: unknown }).__pwned),
        'undefined',
      );
      assert.equal(dialogs, 0);
      assert.deepEqual([...new Set(requests)], [url], `requests: ${requests.join(', ')}`);
      assert.equal(
        await hostile.locator('script, img, svg, iframe, link, object, embed').count(),
        0,
      );
      assert.deepEqual(
        console.filter((line) => !line.includes('Content Security Policy')),
        [],
        'nothing logged but CSP reports',
      );
      const shown = (await hostile.locator('main').textContent()) ?? '';
      assert.ok(shown.includes(SCRIPT), 'the script is shown as text');
      assert.ok(shown.includes('safe\\u202etxt.exe'), 'the bidi override is shown escaped');
      await hostile.screenshot({ path: join(OUTPUT, 'hostile.png'), fullPage: true });
      await hostile.close();
    } finally {
      await browser.close();
    }
    for (const name of ['demo.png', 'crashed.png', 'hostile.png']) {
      const path = join(OUTPUT, name);
      assert.ok(existsSync(path) && statSync(path).size > 1000, `${path} was written`);
    }
  });
});
