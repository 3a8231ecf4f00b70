import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadAgents, typeScriptProblem } from '../../src/runs/load-agents.ts';
import { UserError } from '../../src/runs/user-error.ts';
import { checkModelSpec } from '../../src/subagents/model-spec.ts';

async function failureOf(folder: string, module: string): Promise<string> {
  try {
    await loadAgents(module, { transcript: join(folder, 'a.jsonl'), cwd: folder, env: {} });
  } catch (error) {
    assert.ok(error instanceof UserError, `not a UserError: ${String(error)}`);
    return error.message;
  }
  assert.fail(`${module} loaded`);
}

function moduleWith(model: string): string {
  return `export default { main: { description: 'd', system: 's', model: ${model} } };\n`;
}

describe('loadAgents checks every model when the module loads, naming the file and the field', () => {
  let folder = '';
  const cases: [string, string, RegExp][] = [
    [
      'empty-object.mjs',
      '{}',
      /^empty-object\.mjs: agent type "main": model: expected a model spec/,
    ],
    [
      'no-colon.mjs',
      '"gpt-5"',
      /^no-colon\.mjs: agent type "main": model: model spec "gpt-5": expected PROVIDER:MODEL/,
    ],
    [
      'unknown.mjs',
      '"mistral:large"',
      /^unknown\.mjs: agent type "main": model: .*unknown provider "mistral"/,
    ],
    [
      'bad-url.mjs',
      '"openai-compatible:ftp://x#m"',
      /model: .*the base URL ftp:\/\/x is not http\(s\)/,
    ],
    ['empty-list.mjs', '[]', /^empty-list\.mjs: agent type "main": model: an empty list/],
    [
      'list.mjs',
      '["openai:gpt-5", 42]',
      /^list\.mjs: agent type "main": model: \[1\]: expected .*, not number$/,
    ],
  ];
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'load-agents-models-'));
    for (const [name, model] of cases) await writeFile(join(folder, name), moduleWith(model));
    await writeFile(
      join(folder, 'good.mjs'),
      moduleWith('["openai:gpt-5", "anthropic:claude-sonnet-4-5"]'),
    );
  });
  after(() => rm(folder, { recursive: true, force: true }));

  for (const [name, model, expected] of cases) {
    test(`model: ${model}`, async () => {
      assert.match(await failureOf(folder, name), expected);
    });
  }

  test('good specs load without their keys (a key is checked before a run starts)', async () => {
    const registry = await loadAgents('good.mjs', {
      transcript: join(folder, 'a.jsonl'),
      cwd: folder,
      env: {},
    });
    assert.deepEqual(Object.keys(registry), ['main']);
  });

  test('checkModelSpec is the same judgement resolveModelSpec makes, without a provider', () => {
    assert.equal(checkModelSpec('openai:gpt-5'), null);
    assert.equal(checkModelSpec('openai-compatible:http://127.0.0.1:8080/v1#qwen3'), null);
    assert.equal(checkModelSpec('openai:')?.reason, 'malformed');
    assert.equal(checkModelSpec('x:y')?.reason, 'unknown-provider');
  });
});

describe('a .ts agents module on a Node that cannot run TypeScript', () => {
  test('names the Node version needed, in one line', () => {
    const problem = typeScriptProblem(
      '/w/agents.ts',
      Object.assign(new TypeError('Unknown file extension ".ts"'), {
        code: 'ERR_UNKNOWN_FILE_EXTENSION',
      }),
      'v20.20.2',
    );
    assert.equal(
      problem,
      'Node v20.20.2 cannot load a TypeScript agents module: it needs Node 22.18 or later (or 23.6 or later), which runs .ts files — or write the module as .js',
    );
  });

  test('other failures, and JavaScript modules, keep their own message', () => {
    const unknown = Object.assign(new Error('x'), { code: 'ERR_UNKNOWN_FILE_EXTENSION' });
    assert.equal(typeScriptProblem('/w/agents.mjs', unknown, 'v20.0.0'), null);
    assert.equal(typeScriptProblem('/w/agents.ts', new SyntaxError('bad'), 'v24.0.0'), null);
  });
});
