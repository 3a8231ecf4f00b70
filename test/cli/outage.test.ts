import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { StatusJson } from '../../src/render/format-status.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { OutageServer } from '../../src/testing/provider-servers.ts';
import { startOutageChatServer } from '../../src/testing/index.ts';
import { runCli, temporaryFolder } from './support/cli-fixtures.ts';

/*
 * The outage scenario through the command line, as a user meets it: `run` against an
 * OpenAI-compatible server that answers 500 fails the run; `status` says `failed`, why, and
 * that it is likely to pass; once the server recovers, `revive --yes` carries the run to its
 * end. And a server that refuses the key: `status` says a person is needed.
 */
describe('llm-agent over a provider outage', () => {
  let folder = '';
  let server: OutageServer;
  let refusing: OutageServer;
  before(async () => {
    folder = await temporaryFolder();
    server = await startOutageChatServer([{ text: 'The report is done.' }], {
      status: 500,
      message: 'upstream unavailable',
    });
    refusing = await startOutageChatServer([], { status: 401, message: 'invalid api key' });
    await writeFile(
      join(folder, 'agents.ts'),
      `export default {
  writer: { description: 'Writes', system: 'writer', model: ${JSON.stringify(`openai-compatible:${server.url}#m`)} },
  locked: { description: 'Has a bad key', system: 'locked', model: ${JSON.stringify(`openai-compatible:${refusing.url}#m`)} },
};
`,
    );
  });
  after(async () => {
    await server.close();
    await refusing.close();
    await rm(folder, { recursive: true, force: true });
  });

  test('run fails, status says failed and why, revive --yes finishes it once the server is back', async () => {
    const run = await runCli(
      ['run', '--agents', 'agents.ts', '--type', 'writer', '--out', 'runs/writer.jsonl', 'Report'],
      { cwd: folder },
    );
    assert.equal(run.code, 1, run.stderr);
    assert.equal(server.failures, 3, 'every attempt met the outage (three rounds)');
    assert.match(run.stderr, /\[writer\] failed/);
    assert.match(
      run.stderr,
      /\nThe run failed; its transcript keeps it revivable \(llm-agent status runs\/writer\.jsonl says why\)\. Carry on with: llm-agent revive runs\/writer\.jsonl --agents agents\.ts\n$/,
    );

    const json = await runCli(['status', 'runs', '--json'], { cwd: folder });
    assert.equal(json.code, 3, json.stderr);
    const parsed = JSON.parse(json.stdout) as StatusJson;
    const entry = parsed.runs[0];
    assert.equal(entry?.state, 'failed');
    assert.equal(entry?.halt?.cause, 'outage');
    assert.equal(entry?.halt?.needsPerson, false);
    assert.match(entry?.halt?.detail ?? '', /HTTP 500: upstream unavailable/);
    assert.equal(parsed.summary.failed, 1);

    const text = await runCli(['status', 'runs'], { cwd: folder, env: { COLUMNS: '400' } });
    assert.equal(text.code, 3);
    assert.match(
      text.stdout,
      /\(writer\)\s+writer\s+writer\s+failed\s+provider unavailable \(HTTP 500/,
    );
    assert.match(
      text.stdout,
      /Failed: writer failed at \S+ on openai-compatible\.chat:m: provider unavailable \(HTTP 500: upstream unavailable\); likely to pass by itself: revive it once the provider answers again\./,
    );
    assert.match(text.stdout, /llm-agent revive runs\/writer\.jsonl --agents MODULE/);

    server.outage = null;
    const revived = await runCli(
      ['revive', 'runs/writer.jsonl', '--agents', 'agents.ts', '--yes'],
      {
        cwd: folder,
      },
    );
    assert.equal(revived.code, 0, revived.stderr);
    assert.match(revived.stdout, /it failed at \S+: provider unavailable/);
    const read = await peek(join(folder, 'runs/writer.jsonl'));
    assert.ok(read.ok);
    const kinds = read.records
      .filter((record) => record.type !== 'checkpoint')
      .map((record) => (record.type === 'message' ? `${record.role}` : record.type));
    assert.deepEqual(kinds, [
      'session-meta',
      'user',
      'run-failed',
      'user',
      'run-revived',
      'assistant',
    ]);
    const after = JSON.parse((await runCli(['status', 'runs', '--json'], { cwd: folder })).stdout);
    assert.equal((after as StatusJson).runs[0]?.state, 'finished');
    // What the model was sent: the user's turn and the resume notice — no turn it did not write.
    const last = server.requests.at(-1) as { messages: { role: string }[] };
    assert.deepEqual(
      last.messages.map((message) => message.role),
      ['system', 'user', 'user'],
    );
  });

  test('a refused key: status says a person is needed', async () => {
    const run = await runCli(
      ['run', '--agents', 'agents.ts', '--type', 'locked', '--out', 'locked/locked.jsonl', 'Hi'],
      { cwd: folder },
    );
    assert.equal(run.code, 1, run.stderr);
    assert.equal(refusing.failures, 1, 'a 401 is not retried');
    const text = await runCli(['status', 'locked'], { cwd: folder, env: { COLUMNS: '400' } });
    assert.match(
      text.stdout,
      /Failed: locked failed at \S+ on openai-compatible\.chat:m: credentials refused \(HTTP 401: invalid api key\); needs a person: fix the API key or its access, then revive it\./,
    );
    const json = JSON.parse((await runCli(['status', 'locked', '--json'], { cwd: folder })).stdout);
    assert.equal((json as StatusJson).runs[0]?.halt?.needsPerson, true);
  });
});
