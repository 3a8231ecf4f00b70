import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, temporaryFolder } from './support/cli-fixtures.ts';

/*
 * A folder below the path given that cannot be read hides runs: `status` says which folder and
 * why, and exits 4, instead of leaving it out in silence. The unreadable folder is made by
 * nesting deeper than the system's path limit (ENAMETOOLONG), which holds for root too (root
 * reads a folder of mode 000).
 */

test('status names a folder it could not read, with the reason, and exits 4', async () => {
  const folder = await temporaryFolder();
  try {
    const name = 'n'.repeat(200);
    // Made one level at a time (relative names stay short); the absolute path passes 4096 bytes.
    execFileSync('bash', [
      '-c',
      `cd "${folder}" && for i in $(seq 1 25); do mkdir ${name} && cd ${name}; done && echo '{}' > deep.jsonl`,
    ]);
    const top = join(folder, name);
    assert.deepEqual(
      await readdir(top),
      [name],
      'the fault exists: a tree deeper than the path limit',
    );
    const json = await runCli(['status', folder, '--json'], { cwd: folder });
    assert.equal(json.code, 4, json.stderr);
    const parsed = JSON.parse(json.stdout) as { notRead: { path: string; reason: string }[] };
    assert.equal(parsed.notRead.length, 1);
    assert.equal(parsed.notRead[0]?.reason, 'ENAMETOOLONG');
    const text = await runCli(['status', folder], { cwd: folder });
    assert.equal(text.code, 4);
    assert.match(text.stdout, /Not read: .* \(ENAMETOOLONG\): the runs in it are not shown/);
  } finally {
    execFileSync('rm', ['-rf', folder]);
    await rm(folder, { recursive: true, force: true });
  }
});
