import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WRAPPER_PROGRAMS, type WrapperProgram } from './wrapper-programs.ts';

/*
 * The process a wrapper part kills (`wrapper-child.ts ai-sdk|openai-agents`): it loads
 * everything (and runs the program once), says `ready`, and on `go` runs the wrapped program
 * (crashtest/wrapper-programs.ts) on the real file system (durability fsync). It says `running` once its
 * run is open (the kill's delay counts from there) and `done` when the
 * program has finished and then waits to be killed.
 */

const runProgram = WRAPPER_PROGRAMS[process.argv[2] as WrapperProgram];
if (runProgram === undefined) throw new Error(`no wrapper program ${process.argv[2]}`);

process.on('message', async (message: { type: string; folder?: string }) => {
  if (message.type !== 'go' || message.folder === undefined) return;
  const folder = message.folder;
  const problems: string[] = [];
  await runProgram(join(folder, 'main.jsonl'), join(folder, 'executions.log'), problems, () =>
    process.send?.({ running: true }),
  );
  process.send?.({ done: true, problems });
});
// One run first, in a folder of its own, so that the runs killed are warm: the first run of a
// process spends most of its time loading and compiling the SDK's code paths.
const scratch = await mkdtemp(join(tmpdir(), `crashtest-${process.argv[2]}-warm-`));
await runProgram(join(scratch, 'main.jsonl'), join(scratch, 'executions.log'), []);
await rm(scratch, { recursive: true, force: true });
process.send?.({ ready: true });
