import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  assert.match(text.stdout, /Next: llm-agent repair FILE/);
});
