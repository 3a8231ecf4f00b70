import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../cli/support/cli-fixtures.ts';

/*
 * Bad lines in a session are named, by line, with the reason, and nothing is lost: a line in
 * the middle that is not JSON is skipped (the clients skip it too) and `repair` says so; a
 * file whose start no format recognises says what is wrong with its first line; a clean
 * session with a torn last line says the line was not read. Through the CLI, on copies of a
 * session pi itself wrote.
 */

const PI = fileURLToPath(new URL('../fixtures/foreign/pi/', import.meta.url));
const OLD = new Date(Date.now() - 60_000);

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-repair-bad-lines-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** A copy of `text` in the folder, left alone a minute ago (not live). */
async function copy(name: string, text: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, text);
  await utimes(path, OLD, OLD);
  return path;
}

test('a line that is not JSON is named as skipped, in the plan and in the repair; its bytes are kept', async () => {
  const lines = (await readFile(join(PI, 'crash-one-call.v3.jsonl'), 'utf8')).split('\n');
  lines.splice(2, 0, '{"type":"message","mess');
  const text = lines.join('\n');
  const path = await copy('skipped.jsonl', text);
  const planned = await runCli(['repair', path, '--dry-run'], { cwd: folder });
  assert.equal(planned.code, 3, planned.stderr);
  assert.match(
    planned.stdout,
    /note: line 3 is not JSON: skipped, as pi skips it; a result written there cannot be seen/,
  );
  const json = await runCli(['repair', path, '--dry-run', '--json'], { cwd: folder });
  assert.deepEqual((JSON.parse(json.stdout) as { skipped: number[] }[])[0]?.skipped, [3]);
  const repaired = await runCli(['repair', path], { cwd: folder });
  assert.equal(repaired.code, 0, repaired.stderr);
  assert.match(repaired.stdout, /^repaired .*\n(?:.*\n)*? {2}note: line 3 is not JSON/);
  assert.ok((await readFile(path, 'utf8')).startsWith(text), 'the original bytes stay a prefix');
});

test('a file no format recognises says what is wrong with its start', async () => {
  const pi = await readFile(join(PI, 'crash-one-call.v3.jsonl'), 'utf8');
  for (const [name, text, why] of [
    ['empty.jsonl', '', /: the file is empty; not a session of/],
    [
      'torn-only.jsonl',
      '{"type":"sess',
      /: it holds only a torn line of 13 bytes; not a session of/,
    ],
    ['bom.jsonl', `\ufeff${pi}`, /: line 1 starts with a byte order mark; not a session of/],
    ['bad-first.jsonl', `{"type":"session",\n${pi}`, /: line 1 is not JSON; not a session of/],
  ] as const) {
    const path = await copy(name, text);
    const result = await runCli(['repair', path], { cwd: folder });
    assert.equal(result.code, 4, name);
    assert.match(result.stdout + result.stderr, why, name);
    assert.equal(await readFile(path, 'utf8'), text, `${name}: nothing written`);
  }
});

test('a session with nothing to repair but a torn last line says that line was not read', async () => {
  const complete = await readFile(join(PI, 'complete.v3.jsonl'), 'utf8');
  const text = `${complete}{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall"`;
  const path = await copy('torn-clean.jsonl', text);
  const result = await runCli(['repair', path], { cwd: folder });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /nothing to repair in /);
  assert.match(
    result.stdout,
    /a torn last line \(\d+ bytes\) was not read: a call it held cannot be seen/,
  );
  assert.equal(await readFile(path, 'utf8'), text, 'nothing written');
});
