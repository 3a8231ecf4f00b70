import assert from 'node:assert/strict';
import { test } from 'node:test';
import { invocationOf } from '../../src/cli/invocation.ts';

test('under npx (or npm exec) the hint is npx with the package’s full name', () => {
  const bin = '/p/node_modules/.bin/llm-agent';
  assert.equal(invocationOf({ npm_command: 'exec' }, bin), 'npx llm-agent-revival');
  // `npx llm-agent` elsewhere would be an unrelated registry package: never suggested.
  const full = '/p/node_modules/.bin/llm-agent-revival';
  assert.equal(invocationOf({ npm_command: 'exec' }, full), 'npx llm-agent-revival');
});

test('from npm scripts: npm run llm-agent -- in this repository, npx in a project that uses it', () => {
  const clone = {
    npm_lifecycle_event: 'demo',
    npm_lifecycle_script: 'node src/cli/main.ts demo',
    npm_package_name: 'llm-agent-revival',
  };
  assert.equal(invocationOf(clone, '/c/src/cli/main.ts'), 'npm run llm-agent --');
  const project = {
    npm_lifecycle_event: 'look',
    npm_lifecycle_script: 'llm-agent status runs/',
    npm_package_name: 'my-app',
  };
  assert.equal(invocationOf(project, '/a/node_modules/.bin/llm-agent'), 'npx llm-agent-revival');
  // A script that is not this CLI (the test runner that starts it) does not count.
  const tests = { ...clone, npm_lifecycle_event: 'test', npm_lifecycle_script: 'node --test' };
  assert.equal(invocationOf(tests, '/c/src/cli/main.ts'), 'llm-agent');
});

test('from PATH, the bin’s own name', () => {
  assert.equal(invocationOf({}, '/usr/local/bin/llm-agent'), 'llm-agent');
  assert.equal(invocationOf({}, '/usr/bin/llm-agent-revival'), 'llm-agent-revival');
  assert.equal(invocationOf({}, '/c/dist/cli/main.js'), 'llm-agent');
  assert.equal(invocationOf({}, undefined), 'llm-agent');
});
