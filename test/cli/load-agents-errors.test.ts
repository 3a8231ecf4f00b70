import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadAgents } from '../../src/runs/load-agents.ts';
import { UserError } from '../../src/runs/user-error.ts';

/** The one-line message loadAgents gives for a module, which must be a UserError. */
async function failureOf(folder: string, module: string): Promise<string> {
  try {
    await loadAgents(module, { transcript: join(folder, 'a.jsonl'), cwd: folder, env: {} });
  } catch (error) {
    assert.ok(error instanceof UserError, `not a UserError: ${String(error)}`);
    return error.message;
  }
  assert.fail(`${module} loaded`);
}

describe('loadAgents: a broken agents module is named with its line and the reason', () => {
  let folder = '';
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'load-agents-'));
    await writeFile(
      join(folder, 'syntax.ts'),
      'export default {\n  main: { model: "x", system: "y" },\n  oops: ,\n};\n',
    );
    await writeFile(
      join(folder, 'throws.mjs'),
      'const ready = false;\nif (!ready) throw new Error("no API key in agents.mjs");\nexport default {};\n',
    );
    await writeFile(
      join(folder, 'factory.mjs'),
      'export default function agents() {\n  return undefined.main;\n}\n',
    );
    await writeFile(join(folder, 'js-syntax.mjs'), 'export default {\n  a: 1\n  b: 2,\n};\n');
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('a TypeScript syntax error: file, line 3, reason', async () => {
    assert.match(
      await failureOf(folder, 'syntax.ts'),
      /^syntax\.ts:3: cannot load the agents module \(.+\)$/,
    );
  });

  test('a throw while the module loads: file, line 2, the thrown message', async () => {
    assert.equal(
      await failureOf(folder, 'throws.mjs'),
      'throws.mjs:2: cannot load the agents module (no API key in agents.mjs)',
    );
  });

  test('a default export function that throws: file, line 2, reason', async () => {
    assert.match(
      await failureOf(folder, 'factory.mjs'),
      /^factory\.mjs:2: its default export failed \(.+\)$/,
    );
  });

  test('a JavaScript syntax error (V8 hides the line): file, reason, and how to find the line', async () => {
    assert.match(
      await failureOf(folder, 'js-syntax.mjs'),
      /^js-syntax\.mjs: cannot load the agents module \(Unexpected identifier 'b'; `node --check js-syntax\.mjs` shows where\)$/,
    );
  });
});

describe('loadAgents: a .ts agents module in a CommonJS package (as npm init -y leaves it)', () => {
  let folder = '';
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'load-agents-cjs-'));
    await writeFile(
      join(folder, 'package.json'),
      JSON.stringify({ name: 'x', version: '1.0.0', type: 'commonjs' }),
    );
    await writeFile(
      join(folder, 'agents.ts'),
      "import { join } from 'node:path';\nexport default { main: { description: join('a'), system: 's', model: 'openai:gpt-5' } };\n",
    );
    await writeFile(
      join(folder, 'exports.ts'),
      "export default { main: { description: 'd', system: 's', model: 'openai:gpt-5' } };\n",
    );
  });
  after(() => rm(folder, { recursive: true, force: true }));

  for (const module of ['agents.ts', 'exports.ts']) {
    test(`${module}: one line naming the package.json and both fixes`, async () => {
      const packageJson = join(folder, 'package.json');
      assert.equal(
        await failureOf(folder, module),
        `${module}: Node reads this .ts file as CommonJS because ${packageJson} says "type": "commonjs": set "type": "module" in ${packageJson}, or rename the module ${module.replace('.ts', '.mts')}`,
      );
    });
  }

  test('the fix the message names works: as .mts the same module loads', async () => {
    await writeFile(
      join(folder, 'agents.mts'),
      "import { join } from 'node:path';\nexport default { main: { description: join('a'), system: 's', model: 'openai:gpt-5' } };\n",
    );
    const registry = await loadAgents('agents.mts', {
      transcript: join(folder, 'a.jsonl'),
      cwd: folder,
      env: {},
    });
    assert.deepEqual(Object.keys(registry), ['main']);
  });
});
