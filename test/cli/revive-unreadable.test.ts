import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, temporaryFolder } from './support/cli-fixtures.ts';

describe('llm-agent revive: a tree whose only transcript is unreadable', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFile(join(folder, 'bad.jsonl'), '{"v":1}\n');
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('exits 4 as status does, names the file, and writes nothing', async () => {
    const result = await runCli(['revive', 'bad.jsonl', '--yes'], { cwd: folder });
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stdout, /Nothing to revive\./);
    assert.match(`${result.stdout}${result.stderr}`, /bad\.jsonl/);
    assert.equal(await readFile(join(folder, 'bad.jsonl'), 'utf8'), '{"v":1}\n');
  });
});
