import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Loop } from '../../src/loop/loop.ts';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { crashScriptModel, crashScriptTools } from './support/crash-script.ts';
import { recordsOf } from './support/harness.ts';

/*
 * Real process death at every point of the loop's write sequence: a worker process runs the
 * scripted conversation and SIGKILLs itself just before its nth write (or sync) of the
 * transcript. Then, as an application would: inspect, revive, run again with the same script.
 * Whatever the point, the run ends finished, no call's side effect happened twice, no side
 * effect happened without its dispatch on disk, every call is answered exactly once (honestly:
 * INTERRUPTED_MESSAGE when it was in flight), and every view pairs.
 */

const worker = fileURLToPath(new URL('./support/crash-worker.ts', import.meta.url));
const node = process.execPath;

function runWorker(path: string, operation: string, nth: number) {
  return new Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string }>(
    (resolve) => {
      const child = spawn(node, [worker, path, operation, String(nth)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      child.on('exit', (code, signal) => resolve({ code, signal, stdout }));
    },
  );
}

async function checkKillPoint(folder: string, operation: 'write' | 'sync', nth: number) {
  const path = join(folder, `${operation}-${nth}.jsonl`);
  const effectsPath = `${path}.effects`;
  const died = await runWorker(path, operation, nth);
  assert.equal(died.signal, 'SIGKILL', `${operation} #${nth}: the worker really died there`);
  const inspection = await Revival.inspect({ path, maxRevivals: 1 });
  const where = `${operation} #${nth} (${inspection.reason ?? 'revivable'})`;
  if (inspection.reason === 'empty') {
    assert.deepEqual(
      [operation, nth],
      ['write', 1],
      `${where}: only a death before the first turn`,
    );
    return;
  }
  if (inspection.revivable) {
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 1 });
    assert.ok(revived.ok, `${where}: ${JSON.stringify(revived)}`);
    try {
      const result = await new Loop({
        backends: [crashScriptModel()],
        writer: revived.session,
        tools: crashScriptTools((line) => appendFileSync(effectsPath, `${line}\n`)),
      }).run(revived.messages);
      assert.equal(result.status, 'finished', `${where}: ${result.error}`);
    } finally {
      await revived.session.close();
    }
  } else {
    assert.equal(inspection.reason, 'finished', where);
  }
  const records = await recordsOf(path);
  const effects = existsSync(effectsPath)
    ? readFileSync(effectsPath, 'utf8').split('\n').filter(Boolean)
    : [];
  const started = effects.map((line) => line.replace(/^start /, ''));
  assert.equal(new Set(started).size, started.length, `${where}: a side effect happened twice`);
  const dispatched = new Set(
    records.flatMap((record) => (record.type === 'tool-dispatched' ? [record.callId] : [])),
  );
  for (const callId of started) {
    assert.ok(dispatched.has(callId), `${where}: ${callId} ran without a dispatch on disk`);
  }
  const view = conversationView(records);
  assert.deepEqual(pairingViolations(view), [], where);
  const last = view.at(-1);
  assert.ok(last?.role === 'assistant', where);
  assert.deepEqual(last.content, [{ type: 'text', text: 'All steps done.' }], where);
  const results = view.flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part] : []))
      : [],
  );
  assert.deepEqual(
    results.map((part) => part.callId).sort(),
    ['call_a', 'call_b', 'call_c'],
    `${where}: every call answered exactly once`,
  );
  for (const part of results) {
    if (part.output === INTERRUPTED_MESSAGE) {
      assert.equal(part.isError, true);
    } else {
      // A real answer: its side effect happened, exactly once.
      assert.equal(started.filter((callId) => callId === part.callId).length, 1, where);
    }
  }
  return inspection.reason ?? 'revivable';
}

test('SIGKILL before every write and every sync of a run, then revive and run again: finished, honest, nothing twice', async () => {
  const folder = await makeTempFolder('llm-agent-loop-crash-');
  try {
    const clean = await runWorker(join(folder, 'clean.jsonl'), 'none', 0);
    assert.equal(clean.code, 0);
    const counts = JSON.parse(clean.stdout) as { writes: number; syncs: number };
    // The worker's counts include the session's creation (one write, one sync).
    const points: ['write' | 'sync', number][] = [];
    for (let nth = 1; nth <= counts.writes - 1; nth += 1) points.push(['write', nth]);
    for (let nth = 1; nth <= counts.syncs - 1; nth += 1) points.push(['sync', nth]);
    assert.ok(points.length >= 15, `kill points: ${points.length}`);
    const outcomes: string[] = [];
    const queue = [...points];
    await Promise.all(
      [1, 2].map(async () => {
        for (let point = queue.shift(); point !== undefined; point = queue.shift()) {
          outcomes.push((await checkKillPoint(folder, point[0], point[1])) ?? 'empty');
        }
      }),
    );
    assert.equal(outcomes.length, points.length);
    // The sweep met the interesting tails, not only the easy ones.
    assert.ok(outcomes.includes('revivable'));
  } finally {
    await removeFolder(folder);
  }
});
