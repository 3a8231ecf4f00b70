/**
 * Child process of the status benchmark: runs the CLI's `status --json` command in-process
 * over one folder and prints how long the command itself took (module loading excluded), its
 * exit code and how many runs it reported in each state.
 *
 * @example
 * node bench/status-driver.ts bench/data/status-10000
 */
import { Writable } from 'node:stream';

interface CommandLike {
  run(argv: string[], io: unknown): Promise<number>;
}

const STATUS_MODULE = '../dist/cli/status-command.js';
const STYLE_MODULE = '../dist/render/terminal-style.js';
const STATS_PREFIX = 'llm-agent status stats: ';

/** Count every `state` member anywhere in the JSON the command printed. */
export function countStates(
  value: unknown,
  counts: Record<string, number> = {},
): Record<string, number> {
  if (Array.isArray(value)) for (const item of value) countStates(item, counts);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === 'state' && typeof item === 'string') counts[item] = (counts[item] ?? 0) + 1;
      else countStates(item, counts);
    }
  }
  return counts;
}

async function main(): Promise<void> {
  const folder = process.argv[2] ?? '.';
  const { statusCommand } = (await import(STATUS_MODULE)) as { statusCommand: CommandLike };
  const { createStyle } = (await import(STYLE_MODULE)) as {
    createStyle(enabled: boolean): unknown;
  };
  const chunks: Buffer[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  // The command's stats line (where its answers came from) is caught, not printed.
  const errors: Buffer[] = [];
  const stderr = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      errors.push(Buffer.from(chunk));
      callback();
    },
  });
  const io = {
    stdout,
    stderr,
    stdin: process.stdin,
    env: { LLM_AGENT_STATUS_STATS: '1' },
    cwd: process.cwd(),
    out: createStyle(false),
    err: createStyle(false),
  };
  const started = performance.now();
  const exitCode = await statusCommand.run([folder, '--json'], io);
  const ms = performance.now() - started;
  const text = Buffer.concat(chunks).toString('utf8');
  let states: Record<string, number> = {};
  try {
    states = countStates(JSON.parse(text));
  } catch {
    states = { 'unparsed-output': 1 };
  }
  const errorText = Buffer.concat(errors).toString('utf8');
  // Anything else the command said on stderr is passed on.
  const other = errorText
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith(STATS_PREFIX));
  if (other.length > 0) process.stderr.write(`${other.join('\n')}\n`);
  const statsText = errorText.split('\n').find((line) => line.startsWith(STATS_PREFIX));
  const stats = statsText === undefined ? null : JSON.parse(statsText.slice(STATS_PREFIX.length));
  process.stdout.write(
    `${JSON.stringify({ ms, exitCode, states, outputBytes: text.length, stats })}\n`,
  );
}

await main();
