import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { claudeCodeFormat } from '../../src/repair/claude-code-format.ts';
import { codexFormat } from '../../src/repair/codex-format.ts';
import { piFormat } from '../../src/repair/pi-format.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { sessionLines } from '../../src/repair/session-lines.ts';
import { releaseVerdict, TESTED_RELEASES } from '../../src/repair/tested-releases.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { SEEN_SHAPES_FILE, seenShapesSource } from '../fixtures/foreign/seen-shapes.ts';

/*
 * Which client releases `repair` accepts (src/repair/tested-releases.ts): the range the
 * real-client tests ran, end to end, on several releases per client (their sessions are in
 * test/fixtures/foreign/releases/); an older release refused; a newer one refused naming both
 * versions, or with --allow-newer repaired only when every line it reads and writes is of a
 * shape those sessions hold (src/repair/seen-shapes.ts).
 */

const FOREIGN = new URL('../fixtures/foreign/', import.meta.url);
const RELEASES = fileURLToPath(new URL('releases/', FOREIGN));

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-versions-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** A session file in the temp folder, left alone long enough not to look live. */
async function session(name: string, text: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, text);
  const old = new Date(Date.now() - 60_000);
  await utimes(path, old, old);
  return path;
}

const claudeKilled = readFileSync(new URL('claude-code/killed-one-call.jsonl', FOREIGN), 'utf8');
const codexKilled = readFileSync(new URL('codex/killed-one-call.jsonl', FOREIGN), 'utf8');
const asClaude = (version: string) =>
  claudeKilled.replaceAll('"version":"2.1.197"', `"version":"${version}"`);
const asCodex = (version: string) =>
  codexKilled.replace('"cli_version":"0.171.0"', `"cli_version":"${version}"`);

describe('the tested ranges', () => {
  test('a version between the oldest and the newest tested is tested; outside, older or newer', () => {
    assert.deepEqual(releaseVerdict('claude-code', '1.0.98'), { kind: 'tested' });
    assert.deepEqual(releaseVerdict('claude-code', '2.0.5'), { kind: 'tested' });
    assert.deepEqual(releaseVerdict('claude-code', '2.1.332'), { kind: 'tested' });
    assert.deepEqual(releaseVerdict('claude-code', '1.0.97'), { kind: 'older', oldest: '1.0.98' });
    assert.deepEqual(releaseVerdict('claude-code', '2.1.333'), {
      kind: 'newer',
      newest: '2.1.332',
    });
    assert.deepEqual(releaseVerdict('codex', '0.160.0'), { kind: 'tested' });
    assert.deepEqual(releaseVerdict('codex', '0.148.0-alpha.8'), { kind: 'unknown' });
    assert.deepEqual(releaseVerdict('codex', '0.1000.0'), { kind: 'newer', newest: '0.171.0' });
  });

  test('every release session the real clients wrote is of a tested release, and each tested release has one', () => {
    const folders = readdirSync(RELEASES).sort();
    for (const format of [claudeCodeFormat, codexFormat]) {
      const tested = folders
        .filter((name) => name.startsWith(`${format.name}-`))
        .map((name) => name.slice(format.name.length + 1));
      assert.deepEqual(
        tested.sort((left, right) => left.localeCompare(right, 'en', { numeric: true })),
        [...TESTED_RELEASES[format.name]],
      );
      for (const version of tested) {
        const files = readdirSync(join(RELEASES, `${format.name}-${version}`));
        assert.ok(files.length > 0);
        for (const file of files) {
          const text = readFileSync(join(RELEASES, `${format.name}-${version}`, file));
          const detected = format.detect(sessionLines(text).lines);
          assert.equal(detected?.supported, true, `${file}: ${JSON.stringify(detected)}`);
          assert.equal(detected?.version, version);
          // Repaired by us (Claude Code 1.x resumes a -p session into a new file).
          assert.ok(text.toString('utf8').includes(INTERRUPTED_MESSAGE.slice(0, 40)), file);
        }
      }
    }
  });

  test('pi: every tested release wrote session v3, repaired and resumed', () => {
    for (const version of TESTED_RELEASES.pi) {
      const files = readdirSync(join(RELEASES, `pi-${version}`));
      assert.deepEqual(files.sort(), ['repaired-resumed-1.jsonl', 'repaired-resumed-2.jsonl']);
      for (const file of files) {
        const text = readFileSync(join(RELEASES, `pi-${version}`, file));
        const detected = piFormat.detect(sessionLines(text).lines);
        assert.equal(detected?.version, 'session v3', `${version} ${file}`);
        assert.equal(detected?.supported, true);
        assert.match(text.toString('utf8'), /I will check the markers before doing anything else/);
      }
    }
  });

  test('src/repair/seen-shapes.ts is what test/fixtures/foreign/seen-shapes.ts makes of the fixtures', () => {
    assert.equal(
      readFileSync(SEEN_SHAPES_FILE, 'utf8'),
      seenShapesSource(),
      'stale: run node test/fixtures/foreign/seen-shapes.ts',
    );
  });
});

describe('Claude Code and Codex releases outside the range', () => {
  test('older: refused, naming the range, nothing written', async () => {
    for (const [name, text] of [
      ['old-claude.jsonl', asClaude('1.0.97')],
      ['old-codex.jsonl', asCodex('0.145.0')],
    ] as const) {
      const path = await session(name, text);
      const outcome = await repairSession(path, { allowNewer: true });
      assert.equal(outcome.status, 'refused');
      assert.equal(outcome.status === 'refused' && outcome.reason, 'unsupported-version');
      assert.match(outcome.status === 'refused' ? outcome.detail : '', /older than the range/);
      assert.equal(await readFile(path, 'utf8'), text);
    }
  });

  test('newer: refused by default, naming both versions; the CLI exits 4', async () => {
    const path = await session('new-claude.jsonl', asClaude('2.1.400'));
    const outcome = await repairSession(path);
    assert.equal(outcome.status === 'refused' && outcome.reason, 'unsupported-version');
    const detail = outcome.status === 'refused' ? outcome.detail : '';
    assert.match(detail, /2\.1\.400, newer than 2\.1\.332/);
    assert.match(detail, /--allow-newer/);
    const cli = await runCli(['repair', path], { cwd: folder });
    assert.equal(cli.code, 4, cli.stdout + cli.stderr);
    assert.equal(await readFile(path, 'utf8'), asClaude('2.1.400'));
  });

  test('newer with --allow-newer, every line of a seen shape: repaired, saying so', async () => {
    for (const [name, text] of [
      ['newer-claude.jsonl', asClaude('2.1.400')],
      ['newer-codex.jsonl', asCodex('0.180.0')],
    ] as const) {
      const path = await session(name, text);
      const outcome = await repairSession(path, { allowNewer: true });
      assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
      if (outcome.status !== 'repaired') continue;
      assert.equal(outcome.detection.supported, true);
      assert.match(outcome.detection.reason ?? '', /--allow-newer/);
      assert.ok((await readFile(path, 'utf8')).startsWith(text));
    }
  });

  test('newer with --allow-newer, a line of an unseen shape: refused as shape, exit 4, nothing written', async () => {
    // A field no tested release writes, on the last line.
    const lines = asClaude('2.1.400').trimEnd().split('\n');
    const last = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
    lines[lines.length - 1] = JSON.stringify({ ...last, futureField: { kind: 1 } });
    const text = `${lines.join('\n')}\n`;
    const path = await session('unseen-claude.jsonl', text);
    const outcome = await repairSession(path, { allowNewer: true });
    assert.equal(outcome.status === 'refused' && outcome.reason, 'shape', JSON.stringify(outcome));
    assert.match(
      outcome.status === 'refused' ? outcome.detail : '',
      new RegExp(
        `--allow-newer: line ${lines.length} is of a shape the tests never saw: .*futureField`,
      ),
    );
    const cli = await runCli(['repair', '--allow-newer', path], { cwd: folder });
    assert.equal(cli.code, 4, cli.stdout + cli.stderr);
    assert.match(cli.stdout, /not repaired \(shape\)/);
    assert.equal(await readFile(path, 'utf8'), text);
    assert.deepEqual(
      (await readdir(folder)).filter((name) => name.startsWith('unseen-claude.jsonl.bak-')),
      [],
    );
  });

  test('--help names --allow-newer and its exit code', async () => {
    const help = await runCli(['repair', '--help'], { cwd: folder });
    assert.match(help.stdout, /--allow-newer/);
    assert.match(help.stdout, /with --allow-newer a line of a shape the tests never saw/);
  });
});
