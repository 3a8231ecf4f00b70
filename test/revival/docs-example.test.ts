import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import {
  assistant,
  call,
  dispatch,
  fixedClock,
  result,
  user,
  writeTranscript,
} from './support/transcripts.ts';

/*
 * docs/revival.md shows a transcript before and after revive. Those lines are not typed by
 * hand: this test writes the same run with a fixed clock, revives it, and checks that the
 * document holds exactly the lines the code writes. `PRINT_DOCS_EXAMPLE=1` prints them.
 */

const PATH = '/runs/main.jsonl';

async function example(): Promise<{ before: string; after: string; inspection: string }> {
  const fileSystem = new MemoryFileSystem();
  await writeTranscript(
    PATH,
    [
      user('Summarise notes.md, and wait for the researcher.'),
      assistant('', [
        call('call_r', 'read_file', { path: 'notes.md' }),
        call('call_w', 'write_file', { path: 'summary.md' }),
        call('call_j', 'task_wait', { agentIds: ['researcher-1'] }),
        call('call_n', 'read_file', { path: 'todo.md' }),
      ]),
      { ...dispatch('call_r', 'read_file'), idempotency: 'read-only' },
      dispatch('call_w', 'write_file'),
      dispatch('call_j', 'task_wait', ['researcher-1']),
      result('call_r', 'read_file', '# Notes'),
    ],
    {
      fileSystem,
      meta: { agentId: 'main', agentType: 'main', label: 'main', model: 'openai:gpt-5' },
    },
  );
  const before = fileSystem.readFile(PATH).toString();
  const inspection = JSON.stringify(
    await Revival.inspect({ path: PATH, maxRevivals: 2, fileSystem }),
    null,
    2,
  );
  const revived = await Revival.revive({
    path: PATH,
    agentId: 'main',
    maxRevivals: 2,
    fileSystem,
    clock: fixedClock(Date.parse('2026-01-01T01:00:00.000Z')),
  });
  assert.ok(revived.ok);
  // What revive wrote, read before the session is closed: a Loop would carry on from here.
  const after = fileSystem.readFile(PATH).toString().slice(before.length);
  await revived.session.close();
  return { before, after, inspection };
}

describe('docs/revival.md', () => {
  test('the worked example is the transcript this code writes, before and after revive', async () => {
    const { before, after, inspection } = await example();
    if (process.env.PRINT_DOCS_EXAMPLE === '1') {
      console.log(`BEFORE\n${before}INSPECTION\n${inspection}\nAFTER\n${after}`);
    }
    const document = await readFile(new URL('../../docs/revival.md', import.meta.url), 'utf8');
    assert.ok(document.includes(`\`\`\`jsonl\n${before}\`\`\``), 'the "before" block is stale');
    assert.ok(document.includes(`\`\`\`jsonl\n${after}\`\`\``), 'the "after" block is stale');
    // Compared as data: a markdown formatter may re-wrap the JSON block.
    const block = /```json\n([\s\S]*?)\n```/.exec(document)?.[1] ?? 'null';
    assert.deepEqual(JSON.parse(block), JSON.parse(inspection), 'the inspection block is stale');
  });
});
