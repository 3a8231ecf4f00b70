import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { displayWidth } from '../../src/render/display-width.ts';
import { colourEnabled } from '../../src/render/terminal-style.ts';
import { Session } from '../../src/transcript/session.ts';
import {
  type CliResult,
  runCli,
  temporaryFolder,
  writeFixtureTree,
} from './support/cli-fixtures.ts';

const ESC = '\u001b[';
const WIDE_LABEL = '報告書を書く報告書を書く報告書を書く報告書を書く';

/** The display column where `word` starts in `line` (-1 if absent). */
function columnOf(line: string, word: string): number {
  const at = line.indexOf(word);
  return at === -1 ? -1 : displayWidth(line.slice(0, at));
}

function widest(text: string): { width: number; line: string } {
  let found = { width: 0, line: '' };
  for (const line of text.split('\n')) {
    const width = displayWidth(line);
    if (width > found.width) found = { width, line };
  }
  return found;
}

describe('llm-agent status fits the terminal', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    const demo = await runCli(['demo', 'demo'], { cwd: folder });
    assert.equal(demo.code, 0, demo.stderr);
    await writeFixtureTree(folder);
    const labels: [string, string][] = [
      ['wide', WIDE_LABEL],
      ['narrow', 'plain ascii label that is long enough to be cut'],
    ];
    for (const [name, label] of labels) {
      const session = await Session.create(
        join(folder, 'labels', `${name}.jsonl`),
        { agentId: name, agentType: 'main', label, model: 'openai:gpt-5' },
        { durability: 'none' },
      );
      await session.close();
    }
    await writeFile(join(folder, 'labels', 'junk.jsonl'), 'not a transcript at all\n');
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('COLUMNS=60 status <demo folder> prints no line wider than 60 columns', async () => {
    const wide = await runCli(['status', 'demo'], { cwd: folder });
    // Without a limit (a pipe, no COLUMNS) the same table is wider: the limit did the work.
    assert.ok(widest(wide.stdout).width > 60, wide.stdout);
    const result = await runCli(['status', 'demo'], { cwd: folder, env: { COLUMNS: '60' } });
    assert.equal(result.code, 0, result.stderr);
    const { width, line } = widest(result.stdout);
    assert.ok(width <= 60, `${width} columns: ${line}\n${result.stdout}`);
    assert.match(result.stdout, /^RUN +.*STATE/m);
    assert.match(result.stdout, /finished/);
    assert.match(result.stdout, /--wide shows everything/);
  });

  test('at 60 columns every line of a tree with unreadable and revivable runs fits too', async () => {
    const result = await runCli(['status', '.'], { cwd: folder, env: { COLUMNS: '60' } });
    assert.equal(result.code, 4, result.stderr);
    const { width, line } = widest(result.stdout);
    assert.ok(width <= 60, `${width} columns: ${line}\n${result.stdout}`);
    assert.match(result.stdout, /Next:\n {2}llm-agent revive /);
  });

  test('a label of wide characters is cut by display width and the columns after it line up', async () => {
    const result = await runCli(['status', 'labels'], { cwd: folder, env: { COLUMNS: '60' } });
    const lines = result.stdout.split('\n');
    const header = lines.find((text) => text.startsWith('RUN')) ?? '';
    const wideRow = lines.find((text) => text.includes('labels/wide.jsonl')) ?? '';
    const narrowRow = lines.find((text) => text.includes('labels/narrow.jsonl')) ?? '';
    assert.match(wideRow, /報告.*…/, result.stdout);
    assert.doesNotMatch(wideRow, new RegExp(WIDE_LABEL), 'the label was cut');
    const state = columnOf(header, 'STATE');
    assert.ok(state > 0, result.stdout);
    assert.equal(columnOf(wideRow, 'empty'), state, result.stdout);
    assert.equal(columnOf(narrowRow, 'empty'), state, result.stdout);
  });

  test('--wide shows every cell whole, whatever COLUMNS says', async () => {
    const result = await runCli(['status', 'labels', '--wide'], {
      cwd: folder,
      env: { COLUMNS: '60' },
    });
    assert.ok(result.stdout.includes(WIDE_LABEL), result.stdout);
    assert.ok(result.stdout.includes('plain ascii label that is long enough to be cut'));
    assert.doesNotMatch(result.stdout, /--wide shows everything/);
  });

  test('an unreadable row shows the file’s real size and its cause, not its state again', async () => {
    const result = await runCli(['status', 'labels/junk.jsonl', '--wide'], { cwd: folder });
    assert.equal(result.code, 4, result.stderr);
    const row = result.stdout.split('\n').find((text) => text.startsWith('labels/junk.jsonl'));
    assert.ok(row !== undefined, result.stdout);
    const cells = row.split(/ {2,}/);
    // RUN, TYPE, LABEL, STATE, WHY, REVIVALS, OPEN, SIZE, ~TOKENS
    assert.equal(cells[3], 'unreadable');
    assert.notEqual(cells[4], 'unreadable');
    assert.match(cells[4] ?? '', /^line 1: /);
    assert.equal(cells[7], `${'not a transcript at all\n'.length} B`);
  });
});

describe('colour', () => {
  let folder = '';
  let plain: CliResult;
  before(async () => {
    folder = await temporaryFolder();
    await writeFixtureTree(folder);
    plain = await runCli(['status', 'runs'], { cwd: folder, env: { FORCE_COLOR: '1' } });
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('FORCE_COLOR=1 colours a pipe; NO_COLOR or FORCE_COLOR=0 turn it off', async () => {
    assert.ok(plain.stdout.includes(ESC), 'FORCE_COLOR=1 coloured the output');
    for (const env of [{ NO_COLOR: '1', FORCE_COLOR: '1' }, { FORCE_COLOR: '0' }]) {
      const result = await runCli(['status', 'runs'], { cwd: folder, env });
      assert.ok(!result.stdout.includes(ESC), JSON.stringify(env));
    }
  });

  test('on a terminal, FORCE_COLOR=0 and NO_COLOR turn colour off; by default it is on', () => {
    assert.equal(colourEnabled({}, true), true);
    assert.equal(colourEnabled({ FORCE_COLOR: '0' }, true), false);
    assert.equal(colourEnabled({ FORCE_COLOR: 'false' }, true), false);
    assert.equal(colourEnabled({ NO_COLOR: '1' }, true), false);
  });
});
