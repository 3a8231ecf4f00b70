import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { envelopeLine } from '../../src/render/format-conversation.ts';
import { createStyle } from '../../src/render/terminal-style.ts';
import { Revival } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { buildTree } from '../../src/runs/inspect-tree.ts';
import { planText, planTreeRevival } from '../../src/runs/tree-revival-plan.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { planTableHtml } from '../../src/ui/plan-table.ts';
import { readAll } from '../support/repair-checks.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * test/fixtures/v1/undeclared.jsonl (frozen, see its README): an AI SDK run killed inside a
 * tool whose idempotency no one declared. The dispatch says so (`idempotencyDeclared: false`,
 * a v1 member), and every plan people read shows the call `side-effect (undeclared)`: assumed,
 * not declared.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/v1/undeclared.jsonl', import.meta.url));

test('undeclared.jsonl reads clean, all v1; the undeclared dispatch is marked, the declared one not', async () => {
  const records = await readAll(FIXTURE, nodeFileSystem);
  assert.ok(records.every((record) => record.v === 1));
  const dispatches = records.flatMap((record) =>
    isKnownRecord(record) && record.type === 'tool-dispatched'
      ? [[record.toolName, record.idempotency, record.idempotencyDeclared]]
      : [],
  );
  assert.deepEqual(dispatches, [
    ['lookup', 'read-only', undefined],
    ['send_report', 'side-effect', false],
  ]);
  const send = records.find(
    (record) =>
      isKnownRecord(record) && record.type === 'tool-dispatched' && record.callId === 'send-1',
  );
  assert.ok(send !== undefined);
  assert.match(envelopeLine(send), /send_report send-1 \(side-effect \(undeclared\)\)/);
});

test('undeclared.jsonl: revivable with send-1 in flight; the plan text and the page table say side-effect (undeclared)', async () => {
  const inspection = await Revival.inspect({ path: FIXTURE, maxRevivals: 3 });
  assert.ok(inspection.revivable);
  assert.deepEqual(
    inspection.openDispatches.map((open) => [
      open.callId,
      open.idempotency,
      open.idempotencyDeclared,
    ]),
    [['send-1', 'side-effect', false]],
  );
  const plan = planTreeRevival(buildTree([{ path: FIXTURE, inspection }], process.cwd()));
  assert.deepEqual(
    plan.revivals.flatMap((revival) => revival.interrupt.map((call) => call.idempotency)),
    ['side-effect (undeclared)'],
  );
  assert.match(
    planText(plan, createStyle(false)),
    /answer send_report send-1 \(side-effect \(undeclared\)\) as interrupted/,
  );
  assert.match(planTableHtml(plan), /NOT retried<\/span> \(side-effect \(undeclared\)\)/);
});

test('undeclared.jsonl (a copy) revives as any run: send-1 answered interrupted, never run again', async () => {
  const folder = await makeTempFolder('llm-agent-undeclared-');
  try {
    const path = join(folder, 'undeclared.jsonl');
    await copyFile(FIXTURE, path);
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 3 });
    assert.ok(revived.ok, revived.ok ? '' : revived.detail);
    await revived.session.close();
    const answers = revived.messages.flatMap((message) =>
      message.content.flatMap((part) =>
        part.type === 'tool-result' && part.callId === 'send-1' ? [part.output] : [],
      ),
    );
    assert.deepEqual(answers, [INTERRUPTED_MESSAGE]);
  } finally {
    await removeFolder(folder);
  }
});
