import { type ChildProcess, fork } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Loop } from '../src/loop/loop.ts';
import type { ToolDefinition } from '../src/loop/types.ts';
import { type Reconciliation, Revival } from '../src/revival/index.ts';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
} from '../src/revival/texts.ts';
import { ScriptedModel } from '../src/testing/index.ts';
import { conversationView } from '../src/transcript/conversation-view.ts';
import { normalizeConversation } from '../src/transcript/normalize-conversation.ts';
import { pairingViolations } from '../src/transcript/pairing-violations.ts';
import { peek } from '../src/transcript/peek.ts';
import type { ForeignRecord, TranscriptRecord } from '../src/transcript/records.ts';
import { isKnownRecord } from '../src/transcript/validate-record.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import {
  type BreachFigures,
  noPartBreaches,
  type PartBreaches,
  tallyBreaches,
} from './invariants.ts';
import {
  type ChargeInput,
  chargeOutput,
  type LedgerEntry,
  ledgerChargeTool,
  readLedger,
} from './ledger-tool.ts';

/*
 * Real kills of a run whose tool has a reconcile that can see the world (a ledger file), each
 * revived after asking it, and checked against the ledger: what every honest reconcile answered
 * is what the ledger says (completed, with the charge's output, or did not happen); a lying,
 * throwing or hanging reconcile falls back to the interrupted text; no key is charged twice,
 * and the reviver never runs a call that was dispatched before the kill. Half the kills land at
 * random moments, half just after the k-th charge reached the ledger (so calls are in flight).
 */

/** The figures of the ledger kills. */
export interface LedgerFigures extends BreachFigures {
  kills: number;
  bySigkill: number;
  /** Calls an honest reconcile settled (completed or did not happen), each checked. */
  reconciled: number;
  /** Of those, calls found completed in the ledger. */
  recovered: number;
  /** Calls whose lying, throwing or hanging reconcile fell back to the interrupted text. */
  fellBack: number;
  failures: string[];
}

const childScript = fileURLToPath(new URL('./ledger-child.ts', import.meta.url));
/** How long a reviver waits for a reconcile (the hanging one is abandoned then). */
const RECONCILE_TIMEOUT_MS = 300;

interface Warm {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<NodeJS.Signals | null>;
}

function warm(): Warm {
  const child = fork(childScript, [], {
    execPath: process.execPath,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve) => {
    child.once('message', () => resolve());
    child.once('exit', () => resolve());
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  return { child, ready, exited };
}

/** Run in `folder` and SIGKILL after `delay` ms, or just after the `afterCharge`-th charge. */
async function runOnce(
  slot: Warm,
  folder: string,
  seed: number,
  kill: { delay: number } | { afterCharge: number } | null,
): Promise<{ signal: NodeJS.Signals | null; milliseconds: number }> {
  await slot.ready;
  const began = performance.now();
  const finished = new Promise<void>((resolve) => {
    let charges = 0;
    slot.child.on('message', (message: { charged?: string; done?: boolean }) => {
      if (message.done === true) resolve();
      if (message.charged === undefined || kill === null || !('afterCharge' in kill)) return;
      charges += 1;
      if (charges === kill.afterCharge) slot.child.kill('SIGKILL');
    });
    slot.exited.then(() => resolve());
  });
  if (slot.child.connected) slot.child.send({ type: 'go', folder, seed });
  if (kill === null || 'afterCharge' in kill) await finished;
  else await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, kill.delay))]);
  const milliseconds = performance.now() - began;
  slot.child.kill('SIGKILL');
  return { signal: await slot.exited, milliseconds };
}

type AnyRecord = TranscriptRecord | ForeignRecord;

async function recordsOf(path: string): Promise<AnyRecord[] | null> {
  const read = await peek(path);
  return read.ok ? read.records : null;
}

/** The revival's answer to a call: the last tool-result part for it. */
function lastResult(records: AnyRecord[], callId: string) {
  let found: { output: unknown; isError: boolean } | undefined;
  for (const record of records.filter(isKnownRecord)) {
    if (record.type !== 'message' || record.role !== 'tool') continue;
    for (const part of record.content) {
      if (part.type === 'tool-result' && part.callId === callId) {
        found = { output: part.output, isError: part.isError };
      }
    }
  }
  return found;
}

function inputOf(records: AnyRecord[], callId: string): ChargeInput | undefined {
  for (const record of records.filter(isKnownRecord)) {
    if (record.type !== 'message' || record.role !== 'assistant') continue;
    for (const part of record.content) {
      if (part.type === 'tool-call' && part.callId === callId) return part.input as ChargeInput;
    }
  }
  return undefined;
}

/** What the revival must have answered for one reconciliation, by the ledger. */
function checkAnswer(
  asked: Reconciliation,
  records: AnyRecord[],
  ledger: LedgerEntry[],
  where: string,
  breaches: PartBreaches,
  figures: LedgerFigures,
): void {
  const mode = inputOf(records, asked.callId)?.mode;
  const entry = ledger.find((line) => line.key === asked.idempotencyKey);
  const answer = lastResult(records, asked.callId);
  const at = `${where}: ${asked.callId} (${mode})`;
  if (mode === 'honest') {
    const truth = entry === undefined ? 'did-not-happen' : 'completed';
    if (asked.answer !== truth) {
      breaches.failed.push(`${at}: reconcile answered ${asked.answer}, the ledger says ${truth}`);
      return;
    }
    figures.reconciled += 1;
    const expected =
      entry === undefined
        ? { output: DID_NOT_HAPPEN_MESSAGE, isError: true }
        : { output: { recovered: RECOVERED_NOTE, output: chargeOutput(entry) }, isError: false };
    if (entry !== undefined) figures.recovered += 1;
    if (JSON.stringify(answer) !== JSON.stringify(expected)) {
      breaches.failed.push(`${at}: answered ${JSON.stringify(answer)?.slice(0, 120)}`);
    }
    return;
  }
  if (asked.answer !== 'unknown') {
    breaches.failed.push(`${at}: a ${mode} reconcile was believed (${asked.answer})`);
    return;
  }
  figures.fellBack += 1;
  if (answer?.output !== INTERRUPTED_MESSAGE || answer.isError !== true) {
    breaches.failed.push(
      `${at}: not the interrupted text: ${JSON.stringify(answer)?.slice(0, 120)}`,
    );
  }
}

/** Revive one killed run after asking its reconciles, run it to its end and check it all. */
async function reviveAndCheck(
  folder: string,
  where: string,
  breaches: PartBreaches,
  figures: LedgerFigures,
): Promise<void> {
  const path = join(folder, 'main.jsonl');
  const ledgerPath = join(folder, 'ledger.log');
  const before = await recordsOf(path);
  const ledger = await readLedger(ledgerPath);
  const dispatched = new Set(
    (before ?? []).flatMap((record) =>
      isKnownRecord(record) && record.type === 'tool-dispatched' ? [record.idempotencyKey] : [],
    ),
  );
  for (const entry of ledger) {
    if (!dispatched.has(entry.key))
      breaches.failed.push(`${where}: ${entry.key} charged, never dispatched`);
  }
  const inspection = await Revival.inspect({ path, maxRevivals: 3 });
  if (!inspection.revivable) {
    if (inspection.reason !== 'finished' && inspection.reason !== 'empty' && ledger.length > 0) {
      breaches.failed.push(`${where}: not revivable (${inspection.reason}: ${inspection.detail})`);
    }
    return;
  }
  const executed: string[] = [];
  const reviverTool = ledgerChargeTool({
    ledgerPath,
    onExecute: (input) => executed.push(input.order),
  }) as ToolDefinition<unknown>;
  const inFlight = inspection.openDispatches
    .filter((open) => open.resultSeq === undefined && open.joins === undefined)
    .map((open) => open.callId);
  const answers = await Revival.reconcile({
    path,
    tools: [reviverTool],
    timeoutMs: RECONCILE_TIMEOUT_MS,
  });
  if (
    JSON.stringify(answers.map((asked) => asked.callId).sort()) !== JSON.stringify(inFlight.sort())
  ) {
    breaches.failed.push(
      `${where}: asked about ${answers.map((a) => a.callId)}, in flight ${inFlight}`,
    );
  }
  const revived = await Revival.revive({
    path,
    agentId: 'main',
    maxRevivals: 3,
    reconciled: answers,
  });
  if (!revived.ok) {
    breaches.failed.push(`${where}: not revived (${revived.reason}: ${revived.detail})`);
    return;
  }
  const model = new ScriptedModel([{ text: 'Every order is charged.' }]);
  const result = await new Loop({
    backends: [model.model],
    writer: revived.session,
    tools: [reviverTool],
  }).run(revived.messages);
  if (result.status !== 'finished') breaches.failed.push(`${where}: revived run ${result.status}`);
  const after = (await recordsOf(path)) ?? [];
  const finalLedger = await readLedger(ledgerPath);
  for (const asked of answers) checkAnswer(asked, after, ledger, where, breaches, figures);
  const keys = finalLedger.map((entry) => entry.key);
  for (const key of new Set(keys)) {
    const count = keys.filter((other) => other === key).length;
    if (count > 1) breaches.doubled.push(`${where}: ${key} charged ${count} times`);
    if (dispatched.has(key) && !ledger.some((entry) => entry.key === key)) {
      breaches.doubled.push(`${where}: ${key}, dispatched before the kill, charged by the reviver`);
    }
  }
  const view = normalizeConversation(conversationView(after.filter(isKnownRecord)));
  for (const violation of pairingViolations(view)) {
    breaches.pairing.push(`${where}: ${violation.code} ${violation.message}`);
  }
}

/**
 * Kill `kills` ledger runs, revive each after asking its reconciles, and check it against the
 * ledger.
 *
 * @example
 * const figures = await runLedgerKills({ kills: 100, lanes: 2, seed: 1 });
 */
export async function runLedgerKills(options: {
  kills: number;
  lanes: number;
  seed: number;
}): Promise<LedgerFigures> {
  const random = seededRandom(options.seed ^ 0x1ed9e2);
  const root = await mkdtemp(join(tmpdir(), 'crashtest-ledger-'));
  const figures: LedgerFigures = {
    kills: 0,
    bySigkill: 0,
    reconciled: 0,
    recovered: 0,
    fellBack: 0,
    lost: 0,
    doubled: 0,
    pairing: 0,
    throws: 0,
    failed: 0,
    failures: [],
  };
  const breaches = noPartBreaches();
  const lanes = Array.from({ length: options.lanes }, () => ({ next: warm() }));
  try {
    const lane0 = lanes[0] as { next: Warm };
    const baselineSlot = lane0.next;
    lane0.next = warm();
    await mkdir(join(root, 'baseline'));
    const baseline = await runOnce(baselineSlot, join(root, 'baseline'), 0, null);
    const plans = Array.from({ length: options.kills }, (_, index) =>
      index % 2 === 0
        ? { delay: Math.round(random() * baseline.milliseconds * 1.1) }
        : { afterCharge: 1 + Math.floor(random() * 12) },
    );
    let next = 0;
    await Promise.all(
      lanes.map(async (lane) => {
        for (let index = next++; index < options.kills; index = next++) {
          const slot = lane.next;
          lane.next = warm();
          const folder = join(root, `kill-${index}`);
          await mkdir(folder);
          const plan = plans[index] ?? null;
          const outcome = await runOnce(slot, folder, options.seed + index, plan);
          figures.kills += 1;
          const where = `ledger kill ${index} (${JSON.stringify(plan)})`;
          if (outcome.signal === 'SIGKILL') figures.bySigkill += 1;
          else
            breaches.failed.push(`${where}: the process ended by ${outcome.signal}, not SIGKILL`);
          try {
            await reviveAndCheck(folder, where, breaches, figures);
          } catch (error) {
            breaches.throws.push(
              `${where}: ${error instanceof Error ? error.stack : String(error)}`,
            );
          }
          await rm(folder, { recursive: true, force: true });
        }
      }),
    );
  } finally {
    for (const lane of lanes) lane.next.child.kill('SIGKILL');
    await rm(root, { recursive: true, force: true });
  }
  figures.failures = tallyBreaches(figures, breaches).slice(0, 20);
  return figures;
}
