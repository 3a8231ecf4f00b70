import { basename } from 'node:path';

/** The package's name: what `npx` must be given (the short `llm-agent` is someone else's). */
const PACKAGE = 'llm-agent-revival';

/**
 * How the user ran this command, as the words to start a hint with, so that every command the
 * CLI suggests can be pasted as it is: `npx llm-agent-revival` under npx and from a project's
 * own npm scripts (where the bins are not on the shell's PATH), `npm run llm-agent --` from the
 * npm scripts of a clone of this repository, and otherwise the bin's name (`llm-agent`, or
 * `llm-agent-revival` when run by that name).
 *
 * @example
 * invocationOf({ npm_command: 'exec' }, '/p/node_modules/.bin/llm-agent'); // 'npx llm-agent-revival'
 * invocationOf({}, '/usr/local/bin/llm-agent'); // 'llm-agent'
 */
export function invocationOf(
  env: Record<string, string | undefined>,
  script: string | undefined,
): string {
  if (env.npm_command === 'exec') return `npx ${PACKAGE}`;
  // An npm script that runs this CLI (not, say, a test runner that starts it).
  if (/\bllm-agent\b|src\/cli\/main\.ts/.test(env.npm_lifecycle_script ?? '')) {
    return env.npm_package_name === PACKAGE ? 'npm run llm-agent --' : `npx ${PACKAGE}`;
  }
  return script !== undefined && basename(script) === PACKAGE ? PACKAGE : 'llm-agent';
}
