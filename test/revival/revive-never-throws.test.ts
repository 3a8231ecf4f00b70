import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Revival } from '../../src/revival/index.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { peek } from '../../src/transcript/peek.ts';
import { MemoryFileSystem } from '../../src/testing/index.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { baseTranscripts, mutate } from './support/mutations.ts';
import { fixedClock, META } from './support/transcripts.ts';

const seed = Number(process.env.SEED ?? Date.now()) >>> 0;
console.log('seed', seed);

const PATH = '/runs/run.jsonl';
const REASONS = new Set(['unreadable', 'running', 'finished', 'revival-cap', 'empty']);

/** Revive `bytes` as a transcript and check what must hold whatever the bytes are. */
async function reviveChecked(bytes: Buffer, label: string): Promise<string> {
  const fileSystem = new MemoryFileSystem();
  fileSystem.writeFile(PATH, bytes);
  const before = await peek(PATH, { fileSystem });
  const envelopesBefore = before.ok
    ? before.records.filter((record) => record.type === 'run-revived').length
    : 0;
  let revived: Awaited<ReturnType<typeof Revival.revive>>;
  try {
    revived = await Revival.revive({
      path: PATH,
      agentId: META.agentId,
      maxRevivals: 3,
      fileSystem,
      clock: fixedClock(),
    });
  } catch (error) {
    assert.fail(`${label}: revive threw ${String(error)} on ${bytes.toString('base64')}`);
  }
  if (!revived.ok) {
    assert.ok(REASONS.has(revived.reason), `${label}: reason ${revived.reason}`);
    assert.ok(revived.detail.length > 0);
    assert.deepEqual(
      fileSystem.readFile(PATH),
      bytes,
      `${label}: a refusal wrote to the transcript`,
    );
    return revived.reason;
  }
  await revived.session.close();
  const after = await peek(PATH, { fileSystem });
  assert.ok(
    after.ok && after.state === 'clean',
    `${label}: revive left the transcript unreadable or torn`,
  );
  const envelopes = after.records.filter((record) => record.type === 'run-revived');
  assert.equal(envelopes.length, envelopesBefore + 1, `${label}: one envelope per revival`);
  const pending = new Set([
    ...revived.pendingJoins.map((join) => join.callId),
    ...revived.neverDispatched.map((call) => call.callId),
  ]);
  const violations = pairingViolations(revived.messages).filter(
    (violation) => !(violation.code === 'unanswered-call' && pending.has(violation.callId ?? '')),
  );
  assert.deepEqual(violations, [], `${label}: the conversation does not pair`);
  const last = revived.messages.at(-1);
  assert.equal(last?.extras?.injected, 'revival', `${label}: the notice comes last`);
  const notices = revived.messages.filter(
    (message) => message.role === 'user' && message.extras?.injected === 'revival',
  );
  assert.ok(notices.length <= envelopes.length, `${label}: more notices than revivals`);
  return 'revived';
}

describe('revive: "Everything about the transcript\'s own state comes back as ok => False with a reason"', () => {
  test('revive on every prefix of real transcripts (a crash at any byte): never throws, refusals write nothing, revivals pair', async () => {
    const outcomes = new Map<string, number>();
    for (const [index, base] of (await baseTranscripts()).entries()) {
      const cuts = new Set<number>([base.length]);
      for (let at = base.indexOf(10); at !== -1; at = base.indexOf(10, at + 1)) {
        cuts.add(at + 1); // a clean crash between two records
        cuts.add(Math.max(0, at - 7)); // a crash in the middle of writing a record
      }
      for (const cut of cuts) {
        const outcome = await reviveChecked(base.subarray(0, cut), `base ${index} cut at ${cut}`);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }
    console.log('outcomes', Object.fromEntries(outcomes));
    for (const outcome of ['revived', 'finished', 'empty'])
      assert.ok((outcomes.get(outcome) ?? 0) > 0, outcome);
  });

  test('revive on 1,000 randomly mutated transcripts: never throws, refusals write nothing, revivals pair', async () => {
    const random = seededRandom(seed);
    const bases = await baseTranscripts();
    const outcomes = new Map<string, number>();
    for (let index = 0; index < 1000; index++) {
      const input = mutate(bases[Math.floor(random() * bases.length)] as Buffer, random);
      const outcome = await reviveChecked(input, `mutation ${index}`);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    console.log('outcomes', Object.fromEntries(outcomes));
    assert.ok((outcomes.get('revived') ?? 0) > 0 && (outcomes.get('unreadable') ?? 0) > 0);
  });
});
