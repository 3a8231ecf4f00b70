import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/*
 * docs/testing.md shows a user's crash test built on `llm-agent-revival/testing`. `npm run
 * check` only compiles it; this runs it, as a user would, with the package's import names
 * pointed at the source, and checks that its test passed.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test("docs/testing.md's crash test runs and passes", async () => {
  const markdown = await readFile(join(ROOT, 'docs', 'testing.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(markdown)?.[1] ?? '';
  assert.ok(
    block.includes("from 'llm-agent-revival/testing'"),
    'the first ts block of docs/testing.md',
  );
  const source = block
    .replace(
      "from 'llm-agent-revival/testing'",
      `from '${join(ROOT, 'src', 'testing', 'index.ts')}'`,
    )
    .replace("from 'llm-agent-revival'", `from '${join(ROOT, 'src', 'index.ts')}'`);
  assert.ok(!source.includes("'llm-agent-revival"), 'every package import was pointed at src/');
  const folder = await mkdtemp(join(tmpdir(), 'llm-agent-docs-testing-'));
  try {
    // The example imports `ai` as a user's project would: from its own node_modules.
    await symlink(join(ROOT, 'node_modules'), join(folder, 'node_modules'));
    const file = join(folder, 'example.test.ts');
    await writeFile(file, source);
    // Without the runner's own NODE_TEST_CONTEXT, the child reports in TAP, not to this runner.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--test', '--test-reporter=tap', file],
      { cwd: folder, env },
    );
    assert.match(stdout, /# pass 1\n/);
    assert.match(stdout, /# fail 0\n/);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
