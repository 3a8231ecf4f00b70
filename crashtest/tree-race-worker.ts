import { PassThrough } from 'node:stream';
import { main } from '../src/cli/main.ts';
import { createStyle } from '../src/render/terminal-style.ts';

/*
 * One reviver of the tree race, a long-lived process driven over IPC: `revive` runs
 * `llm-agent revive ROOT --yes --agents MODULE` in this process (the command as the CLI runs
 * it, without a process start per round) after a short busy wait, and answers with its exit
 * code and output. Whatever it claimed is released when the command returns, as when the CLI
 * process exits.
 */

process.on(
  'message',
  async (message: { type: string; path?: string; agents?: string; spin?: number }) => {
    if (message.type === 'exit') process.exit(0);
    if (message.type !== 'revive' || message.path === undefined || message.agents === undefined)
      return;
    let stdout = '';
    let stderr = '';
    const out = new PassThrough();
    const err = new PassThrough();
    out.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    err.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const until = performance.now() + (message.spin ?? 0);
    while (performance.now() < until) {
      // Spin: a timer would be far coarser than the race.
    }
    const code = await main(['revive', message.path, '--yes', '--agents', message.agents], {
      stdout: out,
      stderr: err,
      stdin: new PassThrough(),
      env: { ...process.env, NO_COLOR: '1' },
      cwd: process.cwd(),
      out: createStyle(false),
      err: createStyle(false),
    });
    process.send?.({ code, stdout, stderr, pid: process.pid });
  },
);
process.send?.({ ready: true });
