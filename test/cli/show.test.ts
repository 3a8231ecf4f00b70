import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FIXTURE, hasStackTrace, REPO, runCli } from './support/cli-fixtures.ts';
import { fixtureFolder } from './support/fixture-folder.ts';

describe('llm-agent show', () => {
  const fixture = fixtureFolder();
  const child = join('runs', 'main.agents', `${FIXTURE.interruptedChild}.jsonl`);

  test('prints the conversation by role, with tool calls and results', async () => {
    const [plain, withEnvelopes] = await Promise.all([
      runCli(['show', join('runs', 'main.jsonl')], { cwd: fixture.path }),
      runCli(['show', child, '--envelopes'], { cwd: fixture.path }),
    ]);
    assert.equal(plain.code, 0, plain.stderr);
    const headings = plain.stdout.split('\n').filter((line) => line.startsWith('── '));
    assert.deepEqual(
      headings.map((line) => line.replace(/ \[seq \d+\]$/, '')),
      ['── user', '── assistant', '── tool', '── assistant'],
    );
    assert.match(plain.stdout, /→ spawn_agent call_s1 \{"agentType":"worker"/);
    assert.match(plain.stdout, /← spawn_agent call_s2 \{"agentId":"worker-call_s2"/);
    assert.match(
      plain.stdout,
      /→ task_wait call_w \{"agentIds":\["worker-call_s1","worker-call_s2"\]\}/,
    );
    assert.doesNotMatch(plain.stdout, /tool-dispatched/);

    assert.equal(withEnvelopes.code, 0, withEnvelopes.stderr);
    const lines = withEnvelopes.stdout.split('\n');
    const meta = lines.findIndex((line) => line.includes('session-meta agent worker-call_s2'));
    const call = lines.findIndex((line) => line.includes('→ write_file call_x'));
    const dispatched = lines.findIndex((line) =>
      line.includes('tool-dispatched write_file call_x (side-effect)'),
    );
    assert.ok(meta >= 0 && call > meta && dispatched > call, withEnvelopes.stdout);
    assert.match(withEnvelopes.stdout, /parent \.\.\/main\.jsonl via call_s2/);
  });

  test('marks the turns the system wrote', async () => {
    const result = await runCli(['show', join('other', 'noticed.jsonl')], { cwd: fixture.path });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /── user · written by the system \(background\) \[seq 2\]\n {2}\[background event\]/,
    );
    assert.match(result.stdout, /── user \[seq 1\]\n {2}Wait for news/);
  });

  test('--json gives the messages, and the envelopes when asked', async () => {
    const [messagesOnly, withEnvelopes] = await Promise.all([
      runCli(['show', child, '--json'], { cwd: fixture.path }),
      runCli(['show', child, '--json', '--envelopes'], { cwd: fixture.path }),
    ]);
    assert.equal(messagesOnly.code, 0, messagesOnly.stderr);
    const shown = JSON.parse(messagesOnly.stdout) as {
      path: string;
      messages: { role: string; seq: number; content: { type: string }[] }[];
      envelopes?: unknown;
    };
    assert.equal(shown.path, child);
    assert.deepEqual(
      shown.messages.map((message) => [message.role, message.content.map((part) => part.type)]),
      [
        ['user', ['text']],
        ['assistant', ['text', 'tool-call']],
      ],
    );
    assert.equal(shown.envelopes, undefined);
    const full = JSON.parse(withEnvelopes.stdout) as {
      envelopes: { type: string; seq: number; callId?: string }[];
    };
    assert.deepEqual(
      full.envelopes.map((record) => record.type),
      ['session-meta', 'tool-dispatched'],
    );
    assert.equal(full.envelopes[1]?.callId, FIXTURE.writeCall);
  });

  test('a run that failed or was stopped ends with a line saying when, why and what to do', async () => {
    const fixtures = join(REPO, 'test/fixtures/v1');
    const failed = await runCli(['show', join(fixtures, 'failed.jsonl')], { cwd: fixtures });
    assert.equal(failed.code, 0, failed.stderr);
    assert.match(
      failed.stdout,
      /\n {2}· the run failed at 2026-02-01T09:00:07\.000Z on fallback:fallback: provider unavailable \(HTTP 500: scripted HTTP 500\); likely to pass by itself: revive it once the provider answers again\.\n$/,
    );
    const legacy = await runCli(['show', join(fixtures, 'legacy-failed.jsonl')], { cwd: fixtures });
    assert.doesNotMatch(legacy.stdout, /── assistant \[seq 6\]/, 'the failure turn is no turn');
    assert.match(
      legacy.stdout,
      /· the run failed at 2026-02-01T09:00:07\.000Z: provider unavailable/,
    );
    const stopped = await runCli(['show', '--envelopes', join(fixtures, 'stopped.jsonl')], {
      cwd: fixtures,
    });
    assert.match(stopped.stdout, /· \[seq 4\] run-stopped SIGTERM: terminated\n/);
    assert.match(
      stopped.stdout,
      /· the run stopped at \S+: SIGTERM: terminated; revive it to carry on\.\n$/,
    );
  });

  test('a file that is not a transcript, or no file: one line, no stack', async () => {
    const [broken, missing, two] = await Promise.all([
      runCli(['show', join('other', 'broken.jsonl')], { cwd: fixture.path }),
      runCli(['show', 'nothing.jsonl'], { cwd: fixture.path }),
      runCli(['show'], { cwd: fixture.path }),
    ]);
    assert.equal(broken.code, 4);
    assert.match(broken.stderr, /^llm-agent: other\/broken\.jsonl: line 1: not a transcript .+\n$/);
    // The file and the line are named once each, not again inside the cause.
    assert.equal(broken.stderr.split('broken.jsonl').length, 2, broken.stderr);
    assert.equal(broken.stderr.split('1:').length, 2, broken.stderr);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, 'llm-agent: nothing.jsonl: no such file\n');
    assert.equal(two.code, 2);
    assert.equal(two.stderr.split('\n').length, 2);
    for (const result of [broken, missing, two]) {
      assert.equal(result.stdout, '');
      assert.equal(hasStackTrace(result.stderr), false);
    }
  });

  test('an empty transcript says so, in one line (not a blank line)', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'show-empty-'));
    try {
      await writeFile(join(folder, 'empty.jsonl'), '');
      const shown = await runCli(['show', 'empty.jsonl'], { cwd: folder });
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(shown.stdout, '  · the transcript is empty: no record, no conversation\n');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
