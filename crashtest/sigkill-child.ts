import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { nodeFileSystem } from '../src/transcript/file-system.ts';
import { newWorld } from './agents.ts';
import { runTree } from './revive-tree.ts';

/*
 * The process the SIGKILL loop kills: it loads everything, says `ready`, and on `go` runs the
 * agent tree (a parent, two children, joins) on the real file system with durability fsync,
 * logging each tool execution to a side file (synced before the tool returns). It says `done`
 * when the tree has finished and then waits to be killed.
 */

process.on('message', async (message: { type: string; folder?: string }) => {
  if (message.type !== 'go' || message.folder === undefined) return;
  const folder = message.folder;
  const world = newWorld();
  world.log = (execution) => {
    const fd = openSync(join(folder, 'executions.log'), 'a');
    try {
      writeSync(fd, `${JSON.stringify(execution)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };
  const result = await runTree(join(folder, 'main.jsonl'), 'tree', {
    fileSystem: nodeFileSystem,
    world,
    durability: 'fsync',
    maxRevivals: 3,
  });
  process.send?.({ done: true, status: result.status });
});
process.send?.({ ready: true });
