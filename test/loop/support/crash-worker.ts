/*
 * A process that runs one scripted loop and SIGKILLs itself just before the nth `write` or
 * `sync` of its transcript (after the session exists): a real death at an exact point of the
 * loop's write sequence. Its tools record their side effects in `<transcript>.effects`, synced,
 * before returning. Usage: node crash-worker.ts <transcript> <write|sync|none> <nth>
 */
import { appendFileSync, closeSync, fsyncSync, openSync } from 'node:fs';
import { Loop } from '../../../src/loop/loop.ts';
import { nodeFileSystem } from '../../../src/transcript/file-system.ts';
import { Session } from '../../../src/transcript/session.ts';
import { FaultyFileSystem } from '../../../src/testing/index.ts';
import { crashScriptModel, crashScriptTools } from './crash-script.ts';

const [path, operation, nthText] = process.argv.slice(2) as [string, string, string];
const nth = Number(nthText);
let armed = false;
let seen = 0;
const fileSystem = new FaultyFileSystem(nodeFileSystem, {
  beforeCall: (call) => {
    if (!armed || call.operation !== operation || call.path !== path) return;
    seen += 1;
    if (seen === nth) process.kill(process.pid, 'SIGKILL');
  },
});
const session = await Session.create(
  path,
  { agentId: 'main', agentType: 'main', label: 'main', model: 'scripted' },
  { fileSystem },
);
armed = true;
const effects = `${path}.effects`;
const loop = new Loop({
  backends: [crashScriptModel()],
  writer: session,
  tools: crashScriptTools((line) => {
    appendFileSync(effects, `${line}\n`);
    const fd = openSync(effects, 'r');
    fsyncSync(fd);
    closeSync(fd);
  }),
});
const result = await loop.start('Do the three steps.');
await session.close();
process.stdout.write(
  JSON.stringify({
    status: result.status,
    writes: fileSystem.count('write', path),
    syncs: fileSystem.count('sync', path),
  }),
);
