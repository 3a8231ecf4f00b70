import assert from 'node:assert/strict';
import {
  copyFile,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileStore } from '../../src/store/file-store.ts';
import type { TranscriptStore } from '../../src/store/transcript-store.ts';
import { makeTempFolder, removeFolder, steppingClock } from '../support/transcripts.ts';
import { storeContract } from './store-contract.ts';

/* The store contract on the file store: a folder of transcripts, one per run. */

const folders: string[] = [];
after(async () => {
  for (const folder of folders) await removeFolder(folder);
});

function fileStore(store: TranscriptStore): FileStore {
  assert.ok(store instanceof FileStore);
  return store;
}

storeContract({
  name: 'FileStore',
  async make() {
    const folder = await makeTempFolder('llm-agent-store-');
    folders.push(folder);
    return new FileStore(folder, { clock: steppingClock() });
  },
  async other(store) {
    return new FileStore(fileStore(store).folder, { clock: steppingClock() });
  },
  async takeOver(store, run) {
    // Another process puts a copy in the transcript's place (an editor's save, a restore).
    const path = fileStore(store).pathOf(run);
    const before = await stat(path);
    await copyFile(path, `${path}.copy`);
    await rename(`${path}.copy`, path);
    assert.notEqual(
      (await stat(path)).ino,
      before.ino,
      'the file at the path really is another one',
    );
    return new FileStore(fileStore(store).folder, { clock: steppingClock() }).open(run);
  },
  async corrupt(store, run, seq) {
    const path = fileStore(store).pathOf(run);
    const bytes = await readFile(path);
    let start = 0;
    for (let line = 0; line < seq; line += 1) start = bytes.indexOf(0x0a, start) + 1;
    const at = start + 20;
    const original = bytes[at] as number;
    bytes[at] = original ^ 0x01;
    await writeFile(path, bytes);
  },
  async cleanup() {},
});

test('FileStore: a name that would leave the folder or break the layout is refused, and nothing is written', async () => {
  const folder = await makeTempFolder('llm-agent-store-');
  folders.push(folder);
  const store = new FileStore(folder, { clock: steppingClock() });
  for (const bad of [
    '../main',
    'main.agents/../x',
    'main/worker-1',
    'main.agents/',
    'a.agents.agents/b',
    '',
  ]) {
    await assert.rejects(
      () => store.create(bad, { agentId: 'x', agentType: 'x', label: 'x', model: 'test:model' }),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.includes(`${JSON.stringify(bad)} is not a run name: an agent id`),
      `${JSON.stringify(bad)} is refused as a run name, saying what one is`,
    );
  }
  assert.deepEqual(await readdir(folder), []);
});

test('FileStore.list enters only real <run>.agents folders: symlink loops and a linked *.agents folder are not followed', {
  timeout: 20_000,
}, async () => {
  const folder = await makeTempFolder('llm-agent-store-');
  const outside = await makeTempFolder('llm-agent-outside-');
  folders.push(folder, outside);
  const store = new FileStore(folder, { clock: steppingClock() });
  const meta = { agentId: 'main', agentType: 'main', label: 'main', model: 'test:model' };
  await (await store.create('main', meta)).close();
  await (
    await store.create('main.agents/a', {
      ...meta,
      agentId: 'a',
      parent: { transcript: '../main.jsonl', callId: 'call_1' },
    })
  ).close();
  // Two links back to the folder itself (a walk that follows them never ends), a folder named
  // like a child folder that is a link out of the tree, and a loose folder of other files.
  await symlink('.', join(folder, 'l0'));
  await symlink('.', join(folder, 'l1.agents'));
  await writeFile(join(outside, 'x.jsonl'), '');
  await symlink(outside, join(folder, 'evil.agents'));
  await mkdir(join(folder, 'notes'));
  await writeFile(join(folder, 'notes', 'n.jsonl'), '');
  assert.ok(
    (await lstat(join(folder, 'evil.agents'))).isSymbolicLink(),
    'the link is really there',
  );
  assert.deepEqual(await store.list(), ['main', 'main.agents/a']);
  await rm(join(folder, 'main.agents'), { recursive: true });
  assert.deepEqual(await store.list(), ['main'], 'a child folder gone leaves the roots listed');
});
