import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { REPO, runCli } from './support/cli-fixtures.ts';

/*
 * The page of a run revived with reconciles (the frozen v2 fixture: call-a completed, call-b did
 * not happen, call-c's reconcile threw) says what each reconcile answered, beside each answer
 * and in the run's crash history — the web view (`ui`) renders runs with the same code.
 */

const RECONCILED = fileURLToPath(new URL('../fixtures/v2/reconciled.jsonl', import.meta.url));

test('show --html: each answer a reconcile settled says what it answered; the crash history lists them', async () => {
  const result = await runCli(['show', RECONCILED, '--html'], { cwd: REPO });
  assert.equal(result.code, 0, result.stderr);
  const page = result.stdout;
  // The badges on the revival's answer to a call (its result or error part).
  const answerOf = (callId: string): string =>
    new RegExp(
      `← (?:result|error) <strong>charge</strong> <code>${callId}</code>((?:<span class="badge[^"]*">[^<]*</span>)*)`,
    ).exec(page)?.[1] ?? '';
  assert.match(
    answerOf('call-a'),
    /recovered: its tool's reconcile says it completed \(not run again\)/,
  );
  assert.match(answerOf('call-b'), /its tool's reconcile says it did not happen \(not retried\)/);
  assert.match(
    answerOf('call-c'),
    /interrupted, outcome unknown<\/span><span class="badge warn">its tool's reconcile could not tell/,
  );
  assert.match(
    page,
    /asked its tool's reconcile: <code>call-a<\/code> completed, <code>call-b<\/code> did-not-happen, <code>call-c<\/code> unknown<\/li>/,
  );
});
