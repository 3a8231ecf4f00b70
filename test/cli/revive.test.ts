import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { createStyle } from '../../src/render/terminal-style.ts';
import { INTERRUPTED_MESSAGE, Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { peek } from '../../src/transcript/peek.ts';
import { FIXTURE, hasStackTrace, runCli } from './support/cli-fixtures.ts';
import { fixtureFolder } from './support/fixture-folder.ts';

async function snapshot(folder: string): Promise<string[]> {
  return Promise.all(
    [
      'runs/main.jsonl',
      `runs/main.agents/${FIXTURE.finishedChild}.jsonl`,
      `runs/main.agents/${FIXTURE.interruptedChild}.jsonl`,
    ].map((path) => readFile(join(folder, path), 'utf8')),
  );
}

describe('llm-agent revive', () => {
  const fixture = fixtureFolder({ agents: true });

  test('off a terminal and without --yes it prints the plan, refuses and writes nothing', async () => {
    const before = await snapshot(fixture.path);
    const result = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts'], {
      cwd: fixture.path,
    });
    assert.equal(result.code, 2);
    assert.match(result.stdout, /Plan \(children before parents\):/);
    const planned = result.stdout.split('\n').filter((line) => /^ {2}\d\. revive /.test(line));
    assert.match(
      planned[0] ?? '',
      new RegExp(`1\\. revive ${FIXTURE.interruptedChild} \\(worker\\)`),
    );
    assert.match(planned[1] ?? '', /2\. revive main \(main\)/);
    assert.equal(planned.length, 2);
    assert.match(
      result.stdout,
      /answer write_file call_x \(side-effect\) as interrupted, outcome unknown — NOT retried/,
    );
    assert.match(
      result.stdout,
      new RegExp(
        `keep task_wait call_w open for ${FIXTURE.finishedChild} \\(finished: answered from its transcript\\), ${FIXTURE.interruptedChild} \\(revived above\\)`,
      ),
    );
    assert.match(result.stdout, /Total: 2 runs to revive, about [\d,]+ tokens/);
    assert.equal(
      result.stderr,
      'llm-agent: revive: stdin is not a terminal, so nobody can confirm: pass --yes to revive without asking (nothing was written)\n',
    );
    assert.deepEqual(await snapshot(fixture.path), before);
  });

  test('without an agents module for non-demo runs: one line, nothing written', async () => {
    const before = await snapshot(fixture.path);
    const result = await runCli(['revive', 'runs', '--yes'], { cwd: fixture.path });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^llm-agent: revive: --agents MODULE is needed .*\n$/);
    assert.equal(hasStackTrace(result.stderr), false);
    assert.deepEqual(await snapshot(fixture.path), before);
    // The help it points at is named the way the command was run: it pastes.
    const npx = await runCli(['revive', 'runs', '--yes'], {
      cwd: fixture.path,
      env: { npm_command: 'exec' },
    });
    assert.match(npx.stderr, /; see npx llm-agent-revival revive --help\n$/);
  });

  test('a model that cannot be used is found before anything is written', async () => {
    const before = await snapshot(fixture.path);
    await writeFile(
      join(fixture.path, 'keyed-agents.ts'),
      `export default {
  main: { description: 'parent', system: 'main', model: 'openai:gpt-5' },
  worker: { description: 'child', system: 'worker', model: 'openai:gpt-5', canSpawn: false },
};\n`,
    );
    const result = await runCli(['revive', 'runs', '--agents', 'keyed-agents.ts', '--yes'], {
      cwd: fixture.path,
      env: { OPENAI_API_KEY: '' },
    });
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /^llm-agent: keyed-agents\.ts: agent type "worker": model spec "openai:gpt-5": .*set OPENAI_API_KEY\n$/,
    );
    assert.deepEqual(await snapshot(fixture.path), before);
  });

  test('a human who answers no at the prompt: exit 6, nothing written', async () => {
    const before = await snapshot(fixture.path);
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    stdin.end('n\n');
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let printed = '';
    let asked = '';
    stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    stderr.on('data', (chunk: Buffer) => {
      asked += chunk.toString();
    });
    const code = await main(['revive', 'runs/main.jsonl', '--agents', 'agents.ts'], {
      stdin,
      stdout,
      stderr,
      env: {},
      cwd: fixture.path,
      out: createStyle(false),
      err: createStyle(false),
    });
    assert.equal(code, 6);
    assert.match(printed, /Plan \(children before parents\)/);
    assert.match(asked, /Revive 2 runs, sending about [\d,]+ tokens\? \[y\/N\] /);
    assert.match(asked, /Declined; nothing was written\./);
    assert.deepEqual(await snapshot(fixture.path), before);
  });

  test('--yes revives children first and runs the tree to the end; the child answers the pending join', async () => {
    const result = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts', '--yes'], {
      cwd: fixture.path,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Revived runs:/);
    assert.match(
      result.stdout,
      new RegExp(`${FIXTURE.interruptedChild}\\s+finished\\s+B checked after the interruption`),
    );
    assert.match(result.stdout, /main\s+finished\s+main done: /);
    const revivedChild = result.stderr.indexOf(`[${FIXTURE.interruptedChild}] revived`);
    const revivedMain = result.stderr.indexOf('[main] revived');
    assert.ok(revivedChild >= 0 && revivedMain > revivedChild, result.stderr);

    const paths = [
      'runs/main.jsonl',
      `runs/main.agents/${FIXTURE.finishedChild}.jsonl`,
      `runs/main.agents/${FIXTURE.interruptedChild}.jsonl`,
    ];
    for (const path of paths) {
      const inspection = await Revival.inspect({ path: join(fixture.path, path), maxRevivals: 3 });
      assert.equal(inspection.reason, 'finished', path);
    }
    const child = await peek(join(fixture.path, paths[2] as string));
    assert.ok(child.ok);
    const childView = conversationView(child.records);
    const interrupted = childView.flatMap((message) =>
      message.content.filter(
        (part) => part.type === 'tool-result' && part.callId === FIXTURE.writeCall,
      ),
    );
    assert.deepEqual(interrupted, [
      {
        type: 'tool-result',
        callId: FIXTURE.writeCall,
        toolName: 'write_file',
        output: INTERRUPTED_MESSAGE,
        isError: true,
      },
    ]);
    assert.equal(child.records.filter((record) => record.type === 'run-revived').length, 1);
    assert.equal(
      child.records.filter((record) => record.type === 'tool-dispatched').length,
      1,
      'the interrupted call was never dispatched again',
    );

    const parent = await peek(join(fixture.path, paths[0] as string));
    assert.ok(parent.ok);
    const joinResults = conversationView(parent.records).flatMap((message) =>
      message.content.filter(
        (part) => part.type === 'tool-result' && part.callId === FIXTURE.joinCall,
      ),
    );
    assert.equal(joinResults.length, 1, 'the pending join was answered exactly once');
    const output = JSON.stringify(joinResults[0]);
    assert.match(output, /answer A/);
    assert.match(output, /B checked after the interruption/);
    const finished = await peek(join(fixture.path, paths[1] as string));
    assert.ok(finished.ok);
    assert.equal(
      finished.records.filter((record) => record.type === 'run-revived').length,
      0,
      'a finished child is not revived',
    );

    const again = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts'], {
      cwd: fixture.path,
    });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'Nothing to revive.\n');
  });
});
