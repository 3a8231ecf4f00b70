import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { peek } from '../../src/transcript/peek.ts';
import {
  hasStackTrace,
  REPO,
  runCli,
  temporaryFolder,
  writeFixtureAgents,
} from './support/cli-fixtures.ts';

describe('llm-agent run', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFixtureAgents(folder);
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('starts a run from an agents module and runs it to the end', async () => {
    const result = await runCli(
      [
        'run',
        '--agents',
        'agents.ts',
        '--type',
        'solo',
        '--out',
        'runs/solo.jsonl',
        'Say',
        'hello',
      ],
      { cwd: folder },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'hello from solo\n');
    assert.match(result.stderr, /\[solo\] started \(solo\)/);
    assert.match(result.stderr, /\[solo\] finished/);
    const path = join(folder, 'runs', 'solo.jsonl');
    const inspection = await Revival.inspect({ path, maxRevivals: 3 });
    assert.equal(inspection.reason, 'finished');
    assert.equal(inspection.agentId, 'solo');
    assert.equal(inspection.agentType, 'solo');
    const read = await peek(path);
    assert.ok(read.ok);
    const prompt = read.records.find((record) => record.type === 'message');
    assert.deepEqual(prompt?.type === 'message' ? prompt.content : null, [
      { type: 'text', text: 'Say hello' },
    ]);
    const again = await runCli(
      ['run', '--agents', 'agents.ts', '--type', 'solo', '--out', 'runs/solo.jsonl', 'Again'],
      { cwd: folder },
    );
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^llm-agent: runs\/solo\.jsonl: a transcript already exists there/);
  });

  test('the demo agents run with the halting hook off are an ordinary run', async () => {
    const result = await runCli(
      [
        'run',
        '--agents',
        join(REPO, 'src/demo/demo-agents.ts'),
        '--type',
        'lead',
        '--id',
        'lead',
        '--out',
        'demo/lead.jsonl',
        'Write the report.',
      ],
      { cwd: folder },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'Done: report.md holds both sections.\n');
    const report = await readFile(join(folder, 'demo', 'workspace', 'report.md'), 'utf8');
    assert.match(report, /^# Crash-safe agent runs\n\n## Why runs die\n/);
    const status = await runCli(['status', 'demo', '--json'], { cwd: folder });
    assert.equal(status.code, 0, status.stderr);
    const parsed = JSON.parse(status.stdout) as {
      summary: { finished: number; total: number };
    };
    assert.deepEqual([parsed.summary.finished, parsed.summary.total], [3, 3]);
  });

  test('the demo’s Step 1 pasted by hand: the halt is said in words with the kill; revived with the same module, the tree ends', async () => {
    const halting = join(REPO, 'src/demo/halting-demo-agents.ts');
    const child = spawn(
      join(REPO, 'node_modules/.bin/node'),
      [
        join(REPO, 'src/cli/main.ts'),
        'run',
        '--agents',
        halting,
        '--type',
        'lead',
        '--label',
        'Report',
        '--out',
        'pasted/lead.jsonl',
        'Write the report.',
      ],
      { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    const halted = new Promise<string>((resolve) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        const said = /^halted on purpose: .*kill -KILL (\d+) \(or press Ctrl-C twice\)$/m.exec(
          stderr,
        );
        if (said !== null) resolve(said[1] as string);
      });
    });
    const ended = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('close', (_code, signal) => resolve(signal)),
    );
    const pid = await halted;
    assert.equal(Number(pid), child.pid);
    assert.match(stderr, /write_file section-2\.md has \d+ of \d+ bytes on disk/);
    assert.doesNotMatch(
      stderr,
      /\{"type":"half-written"/,
      'words for a person, not the demo’s message',
    );
    process.kill(Number(pid), 'SIGKILL');
    assert.equal(await ended, 'SIGKILL');
    // As the hint after Ctrl-C says: the same module. A revive does not halt again.
    const revived = await runCli(['revive', 'pasted/lead.jsonl', '--agents', halting, '--yes'], {
      cwd: folder,
    });
    assert.equal(revived.code, 0, revived.stderr);
    assert.doesNotMatch(revived.stderr, /halted on purpose/);
    const status = await runCli(['status', 'pasted'], { cwd: folder });
    assert.equal(status.code, 0, status.stdout);
    assert.match(status.stdout, /^pasted\/lead\.jsonl \(lead\)\s+lead\s+Report\s+finished/m);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`${signal} stops the run cleanly: exit 130, recorded as stopped, and it stays revivable`, async () => {
      const out = `slow-${signal}.jsonl`;
      const child = spawn(
        join(REPO, 'node_modules/.bin/node'),
        [
          join(REPO, 'src/cli/main.ts'),
          'run',
          '--agents',
          'agents.ts',
          '--type',
          'slow',
          '--out',
          out,
          'Wait',
        ],
        { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      const waiting = new Promise<void>((resolve) => {
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (stderr.includes('→ wait')) resolve();
        });
      });
      const ended = new Promise<number | null>((resolve) =>
        child.on('close', (code) => resolve(code)),
      );
      await waiting;
      child.kill(signal);
      assert.equal(await ended, 130, stderr);
      assert.match(
        stderr,
        new RegExp(
          `Stopping: every run is aborted and stays revivable; carry on with: llm-agent revive .*slow-${signal}\\.jsonl --agents agents\\.ts\n`,
        ),
      );
      const inspection = await Revival.inspect({ path: join(folder, out), maxRevivals: 3 });
      assert.equal(inspection.revivable, true, JSON.stringify(inspection));
      assert.equal(
        inspection.tail,
        'results-unread',
        'the aborted tool answered; the model never read it',
      );
      assert.equal(inspection.halt?.state, 'stopped');
      assert.match(inspection.halt?.detail ?? '', new RegExp(`^${signal}: `));
      const status = await runCli(['status', out], { cwd: folder, env: { COLUMNS: '300' } });
      assert.equal(status.code, 3, status.stderr);
      assert.match(status.stdout, new RegExp(`stopped\\s+${signal}: `));
      assert.match(status.stdout, new RegExp(`Stopped: slow stopped at \\S+: ${signal}: `));
    });
  }

  test('mistakes in the command or the module: one line each, exit 2, no stack', async () => {
    const results = await Promise.all([
      runCli(['run', 'hello'], { cwd: folder }),
      runCli(['run', '--agents', 'missing.ts', 'hello'], { cwd: folder }),
      runCli(['run', '--agents', 'agents.ts', '--type', 'nobody', 'hello'], { cwd: folder }),
      runCli(['run', '--agents', 'agents.ts', '--type', 'keyed', '--out', 'k.jsonl', 'hello'], {
        cwd: folder,
        env: { OPENAI_API_KEY: '' },
      }),
    ]);
    const [noAgents, missing, unknownType, noKey] = results;
    assert.match(noAgents?.stderr ?? '', /^llm-agent: run: --agents MODULE is required/);
    assert.equal(missing?.stderr, 'llm-agent: missing.ts: no such agents module\n');
    assert.match(
      unknownType?.stderr ?? '',
      /^llm-agent: agents\.ts: no agent type "nobody" \(it defines: main, worker, solo, keyed, slow\)\n$/,
    );
    // The transcript was never created, so the line names the module, not the file.
    assert.match(
      noKey?.stderr ?? '',
      /^llm-agent: agents\.ts: agent type "keyed": model spec "openai:gpt-5": .*set OPENAI_API_KEY \(nothing was written\)\n$/,
    );
    assert.doesNotMatch(noKey?.stderr ?? '', /k\.jsonl/);
    await assert.rejects(readFile(join(folder, 'k.jsonl')), { code: 'ENOENT' });
    for (const result of results) {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
      assert.equal(hasStackTrace(result.stderr), false);
    }
  });
});
