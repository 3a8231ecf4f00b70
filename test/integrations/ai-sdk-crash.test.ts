import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE, RESUME_NOTICE } from '../../src/revival/texts.ts';
import { pairingProblems } from '../../src/testing/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { recordsOf } from '../loop/support/harness.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { FINAL } from './support/crash-program.ts';

/*
 * Proof with the real libraries: a child process runs an AI SDK program (ToolLoopAgent,
 * streamText, our Loop with tool()) against a scripted model and is SIGKILLed inside a
 * side-effect tool; `llm-agent status` shows the run revivable; it is revived — by
 * `llm-agent revive` with the program's own agent, or by the program started again — and
 * continues to the end: the tool ran once, the model read the interrupted text, every prompt
 * passed the providers' pairing rules, and the transcript reads as a Loop's.
 */

const WORKER = fileURLToPath(new URL('./support/crash-worker.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./support/crash-agents.ts', import.meta.url));

function runWorker(program: string, path: string, phase: 'first' | 'revived') {
  return new Promise<{
    signal: NodeJS.Signals | null;
    code: number | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    const child = spawn(process.execPath, [WORKER, program, path], {
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

const cases = [
  { program: 'agent', revivedBy: 'llm-agent revive' },
  { program: 'agent', revivedBy: 'the program started again' },
  { program: 'stream-text', revivedBy: 'llm-agent revive' },
  { program: 'stream-text', revivedBy: 'the program started again' },
  { program: 'loop', revivedBy: 'llm-agent revive' },
] as const;

for (const { program, revivedBy } of cases) {
  test(`${program}: SIGKILLed inside a side-effect tool, shown revivable, revived by ${revivedBy}, ends with the tool run once`, async () => {
    const folder = await makeTempFolder('llm-agent-ai-sdk-crash-');
    try {
      const path = join(folder, 'main.jsonl');
      const died = await runWorker(program, path, 'first');
      assert.equal(died.signal, 'SIGKILL', `the program really died in its tool: ${died.stderr}`);
      assert.deepEqual(effectsOf(path), ['start call_send_1']);

      const status = await runCli(['status', path], { cwd: folder });
      assert.equal(status.code, 3, status.stdout + status.stderr);
      assert.match(status.stdout, /revivable/);
      assert.match(status.stdout, /in flight|send/);

      if (revivedBy === 'llm-agent revive') {
        const revived = await runCli(['revive', path, '--agents', AGENTS, '--yes'], {
          cwd: folder,
          env: { CRASH_PHASE: 'revived', CRASH_PROGRAM: program },
        });
        assert.equal(revived.code, 0, revived.stdout + revived.stderr);
        assert.match(revived.stdout + revived.stderr, /interrupted/);
        assert.ok((revived.stdout + revived.stderr).includes(FINAL), revived.stdout);
      } else {
        const again = await runWorker(program, path, 'revived');
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.stdout.trim(), FINAL);
      }

      assert.deepEqual(effectsOf(path), ['start call_send_1'], 'the tool ran once: never replayed');
      const prompts = readFileSync(`${path}.prompts`, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as LanguageModelV4Prompt);
      assert.equal(prompts.length, 2);
      for (const prompt of prompts) assert.deepEqual(pairingProblems(prompt), []);
      const last = JSON.stringify(prompts[1]);
      assert.ok(
        last.includes(JSON.stringify(INTERRUPTED_MESSAGE).slice(1, -1)),
        'the model read the interrupted answer',
      );
      assert.ok(last.includes(JSON.stringify(RESUME_NOTICE).slice(1, 40)), 'and the resume notice');

      const records = await recordsOf(path);
      const metas = records.filter((record) => record.type === 'session-meta');
      assert.equal(metas.length, 1);
      assert.equal(
        metas[0]?.type === 'session-meta' && metas[0].agentId,
        'main',
        'the same run id',
      );
      assert.equal(records.filter((record) => record.type === 'run-revived').length, 1);
      const settles = records.filter((record) => record.type === 'tool-settled');
      assert.deepEqual(
        settles.map(
          (record) =>
            record.type === 'tool-settled' && [record.callId, record.status, record.reason],
        ),
        [['call_send_1', 'failed', 'interrupted']],
      );
      const view = conversationView(records);
      assert.deepEqual(pairingViolations(view), []);
      assert.equal(view.at(-1)?.role, 'assistant');
      const found = await Revival.inspect({ path, maxRevivals: 3 });
      assert.equal(found.reason, 'finished', JSON.stringify(found));
    } finally {
      await removeFolder(folder);
    }
  });
}

function effectsOf(path: string): string[] {
  return readFileSync(`${path}.effects`, 'utf8').split('\n').filter(Boolean);
}
