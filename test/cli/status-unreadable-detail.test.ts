import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, temporaryFolder } from './support/cli-fixtures.ts';

describe('llm-agent status: an unreadable transcript is shown with its file, line and cause', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFile(join(folder, 'bad.jsonl'), '{"v":1}\n');
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('the text output names the line and the reason, not only the word "unreadable"', async () => {
    const result = await runCli(['status', 'bad.jsonl'], { cwd: folder });
    assert.equal(result.code, 4, result.stderr);
    const line = result.stdout.split('\n').find((text) => text.startsWith('Unreadable:'));
    assert.ok(line !== undefined, result.stdout);
    assert.match(line, /bad\.jsonl:1: not a transcript \(.+\)$/);
  });
});
