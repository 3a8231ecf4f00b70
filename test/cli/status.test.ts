import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { stripColour } from '../../src/render/terminal-style.ts';
import { Session } from '../../src/transcript/session.ts';
import { FIXTURE, hasStackTrace, runCli } from './support/cli-fixtures.ts';
import { fixtureFolder } from './support/fixture-folder.ts';

interface JsonRun {
  path: string;
  agentId: string | null;
  agentType: string | null;
  label: string | null;
  state: string;
  reason: string;
  detail: string | null;
  revivalsUsed: number;
  maxRevivals: number;
  openCalls: number;
  openDispatches: { callId: string; toolName: string | null }[];
  neverDispatched: { callId: string; toolName: string | null }[];
  pendingJoins: { callId: string; agentIds: string[] }[];
  bytes: number;
  messages: number;
  resumeTokens: number;
  children: JsonRun[];
}

describe('llm-agent status', () => {
  const fixture = fixtureFolder();

  test('--json shows the tree with every state, reason and count', async () => {
    const result = await runCli(['status', 'runs', 'other', '--json'], { cwd: fixture.path });
    assert.equal(result.code, 4, result.stderr);
    const status = JSON.parse(result.stdout) as {
      maxRevivals: number;
      runs: JsonRun[];
      summary: Record<string, number>;
      exitCode: number;
    };
    assert.equal(status.maxRevivals, 3);
    assert.equal(status.exitCode, 4);
    assert.deepEqual(status.summary, {
      total: 6,
      resumeTokens: status.summary.resumeTokens ?? -1,
      running: 0,
      finished: 2,
      revivable: 2,
      failed: 0,
      stopped: 0,
      capped: 0,
      unreadable: 1,
      empty: 1,
      queued: 0,
    });
    assert.ok((status.summary.resumeTokens ?? 0) > 0);
    assert.deepEqual(
      status.runs.map((run) => [run.path, run.state]),
      [
        ['other/broken.jsonl', 'unreadable'],
        ['other/empty.jsonl', 'empty'],
        ['other/noticed.jsonl', 'finished'],
        ['runs/main.jsonl', 'revivable'],
      ],
    );
    const main = status.runs[3] as JsonRun;
    assert.equal(main.agentId, 'main');
    assert.equal(main.agentType, 'main');
    assert.equal(main.label, 'Main run');
    assert.equal(main.reason, 'waiting on 2 children');
    assert.equal(main.revivalsUsed, 0);
    assert.equal(main.maxRevivals, 3);
    assert.equal(main.openCalls, 1);
    assert.deepEqual(main.pendingJoins, [
      { callId: FIXTURE.joinCall, agentIds: [FIXTURE.finishedChild, FIXTURE.interruptedChild] },
    ]);
    assert.ok(main.bytes > 0);
    assert.equal(main.messages, 5);
    assert.ok(main.resumeTokens > 0);
    assert.deepEqual(
      main.children.map((child) => [
        child.agentId,
        child.state,
        child.reason,
        child.resumeTokens > 0,
      ]),
      [
        [FIXTURE.finishedChild, 'finished', 'finished', false],
        [FIXTURE.interruptedChild, 'revivable', '1 call in flight', true],
      ],
    );
    const interrupted = main.children[1] as JsonRun;
    assert.equal(interrupted.path, `runs/main.agents/${FIXTURE.interruptedChild}.jsonl`);
    assert.deepEqual(interrupted.openDispatches, [
      { callId: FIXTURE.writeCall, toolName: 'write_file' },
    ]);
    const broken = status.runs[0] as JsonRun;
    assert.equal(broken.reason, 'unreadable');
    assert.match(broken.detail ?? '', /broken\.jsonl/);
  });

  test('the text view is a tree, and says what to do next', async () => {
    const result = await runCli(['status'], { cwd: join(fixture.path, 'runs') });
    assert.equal(result.code, 3, result.stderr);
    const lines = result.stdout.split('\n');
    assert.match(
      lines[0] ?? '',
      /^RUN\s+TYPE\s+LABEL\s+STATE\s+WHY\s+REVIVALS\s+OPEN\s+SIZE\s+~TOKENS$/,
    );
    assert.match(
      lines[1] ?? '',
      /^main\.jsonl \(main\)\s+main\s+Main run\s+revivable\s+waiting on 2 children\s+0\/3\s+1\s/,
    );
    assert.match(
      lines[2] ?? '',
      new RegExp(`^├─ ${FIXTURE.finishedChild}\\s+worker\\s+A\\s+finished`),
    );
    assert.match(
      lines[3] ?? '',
      new RegExp(`^└─ ${FIXTURE.interruptedChild}\\s+worker\\s+B\\s+revivable\\s+1 call in flight`),
    );
    assert.match(result.stdout, /3 runs: 1 finished, 2 revivable\./);
    assert.match(result.stdout, /Next:\n {2}llm-agent revive main\.jsonl --agents MODULE\n/);
    assert.ok(!result.stdout.includes('\u001b['), 'no colour when stdout is not a terminal');
  });

  test('exit codes: 0 when nothing needs doing, 5 at the revival cap', async () => {
    const finished = await runCli(
      ['status', join('runs', 'main.agents', `${FIXTURE.finishedChild}.jsonl`)],
      {
        cwd: fixture.path,
      },
    );
    assert.equal(finished.code, 0, finished.stderr);
    assert.match(finished.stdout, /1 run: 1 finished\./);
    const capped = await runCli(['status', 'runs', '--max-revivals', '0', '--json'], {
      cwd: fixture.path,
    });
    assert.equal(capped.code, 5, capped.stderr);
    const status = JSON.parse(capped.stdout) as { summary: Record<string, number> };
    assert.equal(status.summary.capped, 2);
    assert.equal(status.summary.revivable, 0);
  });

  test('a run held by a live writer is running, and nothing needs doing', async () => {
    const path = join(fixture.path, 'live', 'held.jsonl');
    const session = await Session.create(path, {
      agentId: 'held',
      agentType: 'main',
      label: 'Held',
      model: 'test:none',
    });
    try {
      await session.appendDurable({
        type: 'message',
        role: 'user',
        content: [{ type: 'text', text: 'working' }],
      });
      const result = await runCli(['status', 'live', '--json'], { cwd: fixture.path });
      assert.equal(result.code, 0, result.stderr);
      const status = JSON.parse(result.stdout) as { runs: JsonRun[] };
      assert.equal(status.runs[0]?.state, 'running');
    } finally {
      await session.close();
    }
  });

  test('a user mistake is one line naming the path, exit 2, no stack trace', async () => {
    const missing = await runCli(['status', 'no-such-folder'], { cwd: fixture.path });
    assert.equal(missing.code, 2);
    assert.equal(missing.stdout, '');
    assert.equal(missing.stderr, 'llm-agent: no-such-folder: no such file or folder\n');
    const badOption = await runCli(['status', '--max-revivals', 'many'], { cwd: fixture.path });
    assert.equal(badOption.code, 2);
    assert.equal(badOption.stderr.trim().split('\n').length, 1);
    assert.match(badOption.stderr, /--max-revivals/);
    const unknown = await runCli(['status', '--colour'], { cwd: fixture.path });
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr.trim().split('\n').length, 1);
    for (const result of [missing, badOption, unknown])
      assert.equal(hasStackTrace(result.stderr), false);
  });

  test('colour only when asked for, and never with NO_COLOR', async () => {
    const forced = await runCli(['status', 'runs'], {
      cwd: fixture.path,
      env: { FORCE_COLOR: '1' },
    });
    assert.equal(forced.code, 3);
    assert.ok(forced.stdout.includes('\u001b[33mrevivable\u001b[39m'), forced.stdout);
    const plain = await runCli(['status', 'runs'], {
      cwd: fixture.path,
      env: { FORCE_COLOR: '1', NO_COLOR: '1' },
    });
    assert.equal(plain.code, 3);
    assert.ok(!plain.stdout.includes('\u001b['));
    assert.equal(plain.stdout, stripColour(forced.stdout));
  });
});
