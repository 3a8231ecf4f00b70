import { rm } from 'node:fs/promises';
import { after, before } from 'node:test';
import { temporaryFolder, writeFixtureAgents, writeFixtureTree } from './cli-fixtures.ts';

/**
 * A fresh temporary folder holding the fixture tree ({@link writeFixtureTree}) — and, with
 * `agents: true`, the fixture's `agents.ts` ({@link writeFixtureAgents}) — made before the
 * suite's tests and removed after them. Call it in a `describe` body: it registers that
 * suite's `before` and `after`. `path` can be read once the tests run (the folder does not
 * exist before), so read it inside a test, never in the `describe` body.
 *
 * @example
 * describe('llm-agent show', () => {
 *   const fixture = fixtureFolder();
 *   test('…', async () => {
 *     const result = await runCli(['show', 'runs/main.jsonl'], { cwd: fixture.path });
 *   });
 * });
 */
export function fixtureFolder(options: { agents?: boolean } = {}): { readonly path: string } {
  let path: string | undefined;
  before(async () => {
    path = await temporaryFolder();
    await writeFixtureTree(path);
    if (options.agents === true) await writeFixtureAgents(path);
  });
  after(async () => {
    if (path !== undefined) await rm(path, { recursive: true, force: true });
  });
  return {
    get path(): string {
      if (path === undefined) throw new Error('fixtureFolder: path read before the suite ran');
      return path;
    },
  };
}
