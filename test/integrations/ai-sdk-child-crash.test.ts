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
import { CHILD_FINAL, PARENT_FINAL } from './support/crash-program.ts';

/*
 * Children, with the real libraries: an AI SDK agent hands work to another agent as a tool
 * (revivableSubagent). The process is SIGKILLed inside the child's side-effect tool; status
 * shows both runs revivable; the program started again revives the parent, which carries the
 * child on under its own id (its call answered interrupted, never run again) and answers the
 * parent's pending call with the child's final text.
 */

const WORKER = fileURLToPath(new URL('./support/child-crash-worker.ts', import.meta.url));

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

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

test('a child agent SIGKILLed inside its tool: revived under its own id, its call never run again, the parent answered with its final text', async () => {
  const folder = await makeTempFolder('llm-agent-ai-sdk-child-');
  try {
    const path = join(folder, 'main.jsonl');
    const childPath = join(folder, 'main.agents', 'mailer-call_mail_1.jsonl');
    const died = await runWorker(path, 'first');
    assert.equal(
      died.signal,
      'SIGKILL',
      `the program really died in the child's tool: ${died.stderr}`,
    );
    assert.deepEqual(lines(`${path}.effects`), ['start call_send_1']);

    const child = await recordsOf(childPath);
    const meta = child[0];
    assert.ok(meta?.type === 'session-meta');
    assert.equal(meta.agentId, 'mailer-call_mail_1');
    assert.deepEqual(meta.parent, { transcript: '../main.jsonl', callId: 'call_mail_1' });
    const dispatch = (await recordsOf(path)).find((record) => record.type === 'tool-dispatched');
    assert.ok(dispatch?.type === 'tool-dispatched');
    assert.deepEqual(
      dispatch.joins,
      ['mailer-call_mail_1'],
      "the parent's call is a join on the child",
    );

    const status = await runCli(['status', path], { cwd: folder });
    assert.equal(status.code, 3, status.stdout + status.stderr);
    assert.match(status.stdout, /mailer-call_mail_1/);

    const again = await runWorker(path, 'revived');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.trim(), PARENT_FINAL);
    assert.deepEqual(lines(`${path}.effects`), ['start call_send_1'], 'the tool ran once');

    const childPrompts = lines(`${path}.child-prompts`).map(
      (line) => JSON.parse(line) as LanguageModelV4Prompt,
    );
    assert.equal(childPrompts.length, 2);
    for (const prompt of childPrompts) assert.deepEqual(pairingProblems(prompt), []);
    const revivedPrompt = JSON.stringify(childPrompts[1]);
    assert.ok(revivedPrompt.includes(JSON.stringify(INTERRUPTED_MESSAGE).slice(1, -1)));
    assert.ok(revivedPrompt.includes(JSON.stringify(RESUME_NOTICE).slice(1, 40)));

    const parentPrompts = lines(`${path}.prompts`).map(
      (line) => JSON.parse(line) as LanguageModelV4Prompt,
    );
    assert.equal(parentPrompts.length, 2);
    for (const prompt of parentPrompts) assert.deepEqual(pairingProblems(prompt), []);
    assert.ok(
      JSON.stringify(parentPrompts[1]).includes(CHILD_FINAL),
      "the parent read the child's answer",
    );

    const childFound = await Revival.inspect({ path: childPath, maxRevivals: 3 });
    assert.equal(childFound.reason, 'finished');
    assert.equal(childFound.agentId, 'mailer-call_mail_1', 'revived under its own id');
    assert.equal(childFound.revivalsUsed, 1);
    const parentRecords = await recordsOf(path);
    const settles = parentRecords.flatMap((record) =>
      record.type === 'tool-settled' ? [[record.callId, record.status]] : [],
    );
    assert.deepEqual(
      settles,
      [['call_mail_1', 'completed']],
      'answered by the child, not interrupted',
    );
    const view = conversationView(parentRecords);
    assert.deepEqual(pairingViolations(view), []);
    const answer = view.flatMap((message) =>
      message.content.flatMap((part) => (part.type === 'tool-result' ? [part.output] : [])),
    );
    assert.deepEqual(answer, [CHILD_FINAL]);
    assert.equal((await Revival.inspect({ path, maxRevivals: 3 })).reason, 'finished');
  } finally {
    await removeFolder(folder);
  }
});
