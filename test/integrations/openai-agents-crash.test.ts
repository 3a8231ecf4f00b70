import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { recordsOf } from '../loop/support/harness.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { FINAL, PROMPT } from './support/crash-program.ts';

/*
 * OpenAI Agents JS, with the real library: an Agent run over a TranscriptSession, its model and
 * function tool wrapped, is SIGKILLed inside the side-effect tool; `llm-agent status` shows it
 * revivable; it is revived — by `llm-agent revive` with an agents module naming the same
 * Agent (openaiAgentsDefinition), or by the program started again opening the session — and
 * `run()` continues to the end: the tool ran once, the model was sent the interrupted answer,
 * every call in every input it was sent is answered exactly once (the Responses API's rule).
 */

const WORKER = fileURLToPath(new URL('./support/agents-crash-worker.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./support/agents-crash-agents.ts', import.meta.url));

function runWorker(path: string, phase: 'first' | 'revived') {
  return new Promise<{
    signal: NodeJS.Signals | null;
    code: number | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    const child = spawn(process.execPath, [WORKER, path], {
      env: { ...process.env, CRASH_PHASE: phase },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The Responses API's rule on an input: each function call answered once, no stray result. */
function unpaired(input: { type?: string; callId?: string }[]): string[] {
  const calls = input.filter((item) => item.type === 'function_call').map((item) => item.callId);
  const results = input
    .filter((item) => item.type === 'function_call_result')
    .map((item) => item.callId);
  const problems: string[] = [];
  for (const call of calls) {
    const count = results.filter((id) => id === call).length;
    if (count !== 1) problems.push(`${call} answered ${count} times`);
  }
  for (const result of results) if (!calls.includes(result)) problems.push(`${result} has no call`);
  return problems;
}

for (const revivedBy of ['llm-agent revive', 'opening its session again'] as const) {
  test(`OpenAI Agents JS: SIGKILLed inside a side-effect tool, shown revivable, revived by ${revivedBy}, run() ends with the tool run once`, async () => {
    const folder = await makeTempFolder('llm-agent-openai-agents-');
    try {
      const path = join(folder, 'main.jsonl');
      const died = await runWorker(path, 'first');
      assert.equal(died.signal, 'SIGKILL', `the program really died in its tool: ${died.stderr}`);
      const effects = () => readFileSync(`${path}.effects`, 'utf8').split('\n').filter(Boolean);
      assert.deepEqual(effects(), ['start call_send_1']);

      const status = await runCli(['status', path], { cwd: folder });
      assert.equal(status.code, 3, status.stdout + status.stderr);
      assert.match(status.stdout, /revivable/);

      if (revivedBy === 'llm-agent revive') {
        const revived = await runCli(['revive', path, '--agents', AGENTS, '--yes'], {
          cwd: folder,
          env: { CRASH_PHASE: 'revived' },
        });
        assert.equal(revived.code, 0, revived.stdout + revived.stderr);
        assert.match(revived.stdout + revived.stderr, /interrupted/);
        assert.ok((revived.stdout + revived.stderr).includes(FINAL), revived.stdout);
      } else {
        const again = await runWorker(path, 'revived');
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.stdout.trim(), FINAL);
      }
      assert.deepEqual(effects(), ['start call_send_1'], 'the tool ran once: never replayed');

      const inputs = readFileSync(`${path}.prompts`, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.equal(inputs.length, 2);
      for (const input of inputs) assert.deepEqual(unpaired(input), []);
      assert.ok(
        JSON.stringify(inputs[1]).includes(JSON.stringify(INTERRUPTED_MESSAGE).slice(1, -1)),
        'the model read the interrupted answer',
      );

      assert.ok(
        JSON.stringify(inputs[1]).includes(PROMPT),
        'the revived model read the task the run was given',
      );

      const records = await recordsOf(path);
      const view = conversationView(records);
      // The runner hands the session its input only when run() returns: it must be recorded first.
      assert.deepEqual(view[0]?.role === 'user' && view[0].content, [
        { type: 'text', text: PROMPT },
      ]);
      const metas = records.filter((record) => record.type === 'session-meta');
      assert.equal(metas.length, 1);
      assert.equal(
        metas[0]?.type === 'session-meta' && metas[0].agentId,
        'main',
        'the same run id',
      );
      assert.equal(records.filter((record) => record.type === 'run-revived').length, 1);
      assert.equal(records.filter((record) => record.type === 'tool-dispatched').length, 1);
      assert.deepEqual(
        records.flatMap((record) =>
          record.type === 'tool-settled' ? [[record.callId, record.status, record.reason]] : [],
        ),
        [['call_send_1', 'failed', 'interrupted']],
      );
      assert.deepEqual(pairingViolations(view), []);
      const found = await Revival.inspect({ path, maxRevivals: 3 });
      assert.equal(found.reason, 'finished', JSON.stringify(found));
    } finally {
      await removeFolder(folder);
    }
  });
}
