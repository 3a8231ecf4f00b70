import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../cli/support/cli-fixtures.ts';

/*
 * `llm-agent repair --scan`: a folder tree of mixed formats — sessions each real client wrote,
 * broken and whole, and files of no known format — listed like `status` lists runs, read-only.
 */

const FOREIGN = fileURLToPath(new URL('../fixtures/foreign/', import.meta.url));
const OLD = new Date(Date.now() - 60_000);

/** Where each fixture goes in the client's own layout below a home folder. */
const LAYOUT: [fixture: string, place: string, broken: boolean][] = [
  ['claude-code/killed-two-calls.jsonl', '.claude/projects/-work-app/broken.jsonl', true],
  ['claude-code/complete.jsonl', '.claude/projects/-work-app/whole.jsonl', false],
  ['codex/killed-one-call.jsonl', '.codex/sessions/2026/12/04/rollout-broken.jsonl', true],
  ['codex/interrupted.jsonl', '.codex/sessions/2026/12/04/rollout-interrupted.jsonl', false],
  ['pi/crash-two-calls.v3.jsonl', '.pi/agent/sessions/--work-app--/broken.jsonl', true],
  ['pi/complete.v3.jsonl', '.pi/agent/sessions/--work-app--/whole.jsonl', false],
];

let home: string;
before(async () => {
  home = await mkdtemp(join(tmpdir(), 'llm-agent-repair-scan-'));
  for (const [fixture, place] of LAYOUT) {
    await mkdir(dirname(join(home, place)), { recursive: true });
    await copyFile(join(FOREIGN, fixture), join(home, place));
    // Left alone a minute ago: not live by its time (a scan gives a repair's verdict).
    await utimes(join(home, place), OLD, OLD);
  }
  // Not sessions of any client: skipped, never listed as broken.
  await writeFile(join(home, '.claude/projects/-work-app/notes.jsonl'), '{"note":"hello"}\n');
  await writeFile(join(home, '.codex/sessions/history.txt'), 'not jsonl\n');
});
after(async () => {
  await rm(home, { recursive: true, force: true });
});

async function snapshot(folder: string): Promise<Record<string, string>> {
  const names = (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  const sums: Record<string, string> = {};
  for (const name of names) {
    sums[name] = createHash('sha256')
      .update(await readFile(name))
      .digest('hex');
  }
  return sums;
}

test('repair --scan lists the broken sessions of every format below the default folders, and writes nothing', async () => {
  const before = await snapshot(home);
  const scan = await runCli(['repair', '--scan', '--json'], { cwd: home, env: { HOME: home } });
  assert.equal(scan.code, 3, scan.stderr);
  const json = JSON.parse(scan.stdout) as {
    scanned: number;
    sessions: { path: string; status: string; detection: { format: string } }[];
  };
  assert.equal(json.scanned, LAYOUT.length + 1, 'every .jsonl file was read');
  const byPlace = new Map(json.sessions.map((session) => [session.path, session]));
  for (const [, place, broken] of LAYOUT) {
    const session = byPlace.get(join(home, place));
    assert.ok(session !== undefined, `${place} is listed`);
    assert.equal(session.status, broken ? 'planned' : 'clean', place);
  }
  assert.deepEqual([...new Set(json.sessions.map((session) => session.detection.format))].sort(), [
    'claude-code',
    'codex',
    'pi',
  ]);
  assert.equal(json.sessions.length, LAYOUT.length, 'the note file is not a session');
  assert.deepEqual(await snapshot(home), before, 'nothing written, nothing changed');

  const text = await runCli(['repair', '--scan', '.'], {
    cwd: home,
    env: { HOME: '/nonexistent' },
  });
  assert.equal(text.code, 3);
  assert.match(text.stdout, /6 sessions of 7 files: 3 broken\./);
  assert.match(text.stdout, /broken: 2 calls unanswered\s+claude-code 2\.1\.197/);
  // The hint names the three broken sessions, so it runs as printed.
  const next = /^Next: llm-agent repair --dry-run (.+)$/m.exec(text.stdout);
  assert.ok(next !== null, text.stdout);
  assert.equal((next[1] as string).split(' ').length, 3, text.stdout);
  const dry = await runCli(['repair', '--dry-run', ...(next[1] as string).split(' ')], {
    cwd: home,
    env: { HOME: '/nonexistent' },
  });
  assert.equal(dry.code, 3, dry.stdout + dry.stderr);
});

test('repair --scan of a folder that does not exist is an error, not "0 sessions"', async () => {
  const missing = await runCli(['repair', '--scan', 'no-such-folder'], { cwd: home });
  assert.equal(missing.code, 2, missing.stdout);
  assert.match(missing.stderr, /repair --scan: .*no-such-folder: no such folder/);
  assert.equal(missing.stdout, '');
});

test('repair --scan without a DIR, when none of the default folders exists, is an error too', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'llm-agent-repair-scan-empty-'));
  const none = await runCli(['repair', '--scan'], { cwd: home, env: { HOME: empty } });
  assert.equal(none.code, 2, none.stdout);
  assert.match(
    none.stderr,
    /none of the default folders exists \(.*\.claude\/projects, .*\): name the folder to scan/,
  );
  assert.equal(none.stdout, '');
  // One default folder is enough: the others are skipped (a client the user does not have).
  await mkdir(join(empty, '.codex', 'sessions'), { recursive: true });
  const one = await runCli(['repair', '--scan'], { cwd: home, env: { HOME: empty } });
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, /0 sessions of 0 files: 0 broken\./);
  await rm(empty, { recursive: true, force: true });
});

test('repair --scan gives each refusal its reason in text, and a just-changed session the verdict a repair gives', async () => {
  const tree = await mkdtemp(join(tmpdir(), 'llm-agent-repair-scan-why-'));
  try {
    const pi = await readFile(join(FOREIGN, 'pi/crash-two-calls.v3.jsonl'), 'utf8');
    await writeFile(join(tree, 'old.jsonl'), pi.replace('"version":3', '"version":9'));
    await utimes(join(tree, 'old.jsonl'), OLD, OLD);
    await writeFile(join(tree, 'fresh.jsonl'), pi); // written just now: live
    const text = await runCli(['repair', '--scan', '.'], { cwd: tree });
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /refused \(unsupported-version\).*old\.jsonl\n {2}pi session version 9: repair knows pi session versions/,
    );
    assert.match(
      text.stdout,
      /refused \(live\).*fresh\.jsonl\n {2}changed \d+ ms ago: its client may still be writing it\. First stop that client/,
    );
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
});

test('repair --scan never follows a symbolic link: link loops end, links out of the roots are not read', async () => {
  const tree = await mkdtemp(join(tmpdir(), 'llm-agent-repair-scan-links-'));
  const outside = await mkdtemp(join(tmpdir(), 'llm-agent-repair-scan-outside-'));
  try {
    const root = join(tree, 'root');
    await mkdir(join(root, 'a/b'), { recursive: true });
    await copyFile(join(FOREIGN, 'pi/crash-two-calls.v3.jsonl'), join(root, 'a/b/inside.jsonl'));
    await utimes(join(root, 'a/b/inside.jsonl'), OLD, OLD);
    // Three links back up to their parents: followed, the walk never ends.
    await symlink('..', join(root, 'a/b/up'));
    await symlink('../..', join(root, 'a/b/top'));
    await symlink(root, join(root, 'a/loop'));
    // A link to a folder outside the root, and a linked file from outside.
    await copyFile(join(FOREIGN, 'pi/crash-two-calls.v3.jsonl'), join(outside, 'secret.jsonl'));
    await utimes(join(outside, 'secret.jsonl'), OLD, OLD);
    await symlink(outside, join(root, 'out'));
    await symlink(join(outside, 'secret.jsonl'), join(root, 'linked.jsonl'));
    // The fault is real: through the links, the tree has no end and reaches out of the root
    // (Node's recursive readdir follows them and never returns here).
    await stat(join(root, 'a/b/up/b/up/b/top/a/loop/a/b/inside.jsonl'));
    await stat(join(root, 'out/secret.jsonl'));

    const scan = await runCli(['repair', '--scan', '--json', root], { cwd: tree });
    assert.equal(scan.code, 3, scan.stderr);
    const json = JSON.parse(scan.stdout) as { scanned: number; sessions: { path: string }[] };
    assert.deepEqual(
      json.sessions.map((session) => session.path),
      [join(root, 'a/b/inside.jsonl')],
    );
    assert.equal(json.scanned, 1);
  } finally {
    await rm(tree, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  }
});

test('a session resumed without a repair is reported as such, with what the model was told — not "ok"', async () => {
  const tree = await mkdtemp(join(tmpdir(), 'llm-agent-repair-resumed-'));
  try {
    const path = join(tree, 'resumed.jsonl');
    await copyFile(join(FOREIGN, 'claude-code/resumed-unrepaired.jsonl'), path);
    await utimes(path, OLD, OLD);
    const repair = await runCli(['repair', path], { cwd: tree });
    assert.equal(repair.code, 4, repair.stdout + repair.stderr);
    assert.match(
      repair.stdout,
      /^not repaired resumed\.jsonl \(claude-code 2\.1\.197\): already resumed without a repair — Claude Code dropped the calls silently when it resumed: the model was never told of them\n {2}1 tool call\(s\) \(the first on line 7\)/,
    );
    const scan = await runCli(['repair', '--scan', '.'], { cwd: tree });
    assert.equal(scan.code, 0, scan.stderr);
    assert.match(
      scan.stdout,
      /^resumed unrepaired +claude-code 2\.1\.197 +resumed\.jsonl\n {2}Claude Code dropped/,
    );
    assert.doesNotMatch(scan.stdout, /^ok/m);
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
});

test('--dry-run shows the lines as an example: ids and times are made when it writes', async () => {
  const tree = await mkdtemp(join(tmpdir(), 'llm-agent-repair-dry-'));
  try {
    const path = join(tree, 'broken.jsonl');
    await copyFile(join(FOREIGN, 'pi/crash-two-calls.v3.jsonl'), path);
    await utimes(path, OLD, OLD);
    const dry = await runCli(['repair', path, '--dry-run'], { cwd: tree });
    assert.equal(dry.code, 3, dry.stdout + dry.stderr);
    assert.match(
      dry.stdout,
      /would append 2 lines like these \(fresh ids and the time are made when it writes\):/,
    );
    const help = await runCli(['repair', '--help'], { cwd: tree });
    for (const code of [0, 1, 2, 3, 4, 7])
      assert.match(help.stdout, new RegExp(`^ {2}${code} {2}`, 'm'));
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
});
