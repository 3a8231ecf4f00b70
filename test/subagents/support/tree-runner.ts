import { join } from 'node:path';
import { Composer } from '../../../src/subagents/composer.ts';
import { type FileSystem, nodeFileSystem } from '../../../src/transcript/file-system.ts';
import { crashTreeRegistry, MAIN_TASK } from './crash-tree.ts';

/*
 * Runs the crash tree in its own process and kills itself with SIGKILL right after the Nth
 * write to any transcript of the tree (or, with `torn`, after writing only half of it): a
 * whole process tree dying at one precise point. Without a kill point it runs to the end and
 * prints how many writes the tree made.
 *
 * Usage: node tree-runner.ts FOLDER [KILL_AFTER_WRITE] [torn] [deep]
 */

const [folder, ...flags] = process.argv.slice(2);
if (folder === undefined)
  throw new Error('usage: tree-runner.ts FOLDER [KILL_AFTER_WRITE] [torn] [deep]');
const killAfter = flags.find((flag) => /^\d+$/.test(flag));
const torn = flags.includes('torn') ? 'torn' : undefined;
const deep = flags.includes('deep');
const limit = killAfter === undefined ? Number.POSITIVE_INFINITY : Number(killAfter);
let writes = 0;

const transcripts = new Set<number>();
const killing: FileSystem = {
  ...nodeFileSystem,
  async open(path, mode) {
    const fd = await nodeFileSystem.open(path, mode);
    if (path.endsWith('.jsonl') && (mode === 'append' || mode === 'create')) transcripts.add(fd);
    return fd;
  },
  async close(fd) {
    transcripts.delete(fd);
    return nodeFileSystem.close(fd);
  },
  async write(fd, bytes) {
    if (!transcripts.has(fd)) return nodeFileSystem.write(fd, bytes);
    writes += 1;
    if (writes < limit) return nodeFileSystem.write(fd, bytes);
    if (torn === 'torn') {
      await nodeFileSystem.write(fd, bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2))));
    } else {
      await nodeFileSystem.write(fd, bytes);
    }
    process.kill(process.pid, 'SIGKILL');
    return new Promise<number>(() => undefined);
  },
};

const composer = new Composer({
  registry: crashTreeRegistry(join(folder, 'executions.log'), deep),
  limits: { maxConcurrent: 8, maxDepth: 2 },
  fileSystem: killing,
  durability: 'flush',
  loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
});
const { run } = await composer.start({
  path: join(folder, 'main.jsonl'),
  agentType: 'main',
  task: MAIN_TASK,
});
const result = await run;
await composer.idle();
process.stdout.write(`${JSON.stringify({ writes, status: result.status, text: result.text })}\n`);
