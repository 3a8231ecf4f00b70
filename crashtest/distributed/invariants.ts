import type pg from 'pg';
import type { PostgresStore, StoreRunRow } from '../../src/store/postgres/postgres-store.ts';
import { type ChildOutcome, recordedOutcome } from '../../src/subagents/child-outcome.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { normalizeConversation } from '../../src/transcript/normalize-conversation.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import type { TranscriptRecord } from '../../src/transcript/records.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';

/*
 * What must hold of a store after the distributed crashtest, read from the database and the
 * ledger alone. Each breach is one line under the figure it breaks.
 */

/** Breaches by figure; every list must be empty. */
export interface DistributedBreaches {
  /** A record missing: a gap in the seqs, a line that does not decode, last_seq disagreeing. */
  lost: string[];
  /** A record or a call twice: a call dispatched or answered twice, a spawn with two children. */
  doubled: string[];
  /** A side effect executed twice by the system: the ledger holds a call more than once. */
  replayed: string[];
  /** A model view a provider would refuse. */
  pairing: string[];
  /** A death revived twice: revival ordinals not 1, 2, … at distinct epochs, or the count off. */
  doubleRevived: string[];
  /** Anything else: a run left unfinished, a write after a takeover, a join with the wrong answer. */
  failed: string[];
}

/** Counts the check makes along the way. */
export interface DistributedCounts {
  runs: number;
  finished: number;
  capped: number;
  revivals: number;
  joins: number;
  executions: number;
  /** Calls a reconcile settled (completed or did not happen), each checked against the ledger. */
  reconciled: number;
  /**
   * Did-not-happen answers whose key reached the ledger only after the answer was written: a
   * zombie (a worker paused mid-call past its lease) executing once it woke. The fence keeps a
   * zombie out of the transcript, not out of the world; counted, not a breach.
   */
  late: number;
}

/**
 * Check every run of the store against the invariants (see the module comment), with the
 * ledger (`run`, `call_id` per execution) as the witness of side effects.
 */
export async function checkDistributed(
  store: PostgresStore,
  ledger: Pick<pg.Pool, 'query'>,
  schema: string,
  maxRevivals: number,
): Promise<{ breaches: DistributedBreaches; counts: DistributedCounts }> {
  const breaches: DistributedBreaches = {
    lost: [],
    doubled: [],
    replayed: [],
    pairing: [],
    doubleRevived: [],
    failed: [],
  };
  const counts: DistributedCounts = {
    runs: 0,
    finished: 0,
    capped: 0,
    revivals: 0,
    joins: 0,
    executions: 0,
    reconciled: 0,
    late: 0,
  };
  const rows = await store.runs();
  counts.runs = rows.length;
  const executed = await ledger.query<{ run: string; call_id: string; n: number }>(
    `SELECT run, call_id, count(*)::int AS n FROM "${schema}".ledger GROUP BY run, call_id`,
  );
  const executionsOf = new Map<string, { callId: string; n: number }[]>();
  for (const row of executed.rows) {
    counts.executions += row.n;
    if (row.n > 1)
      breaches.replayed.push(`${row.run}: call ${row.call_id} executed ${row.n} times`);
    executionsOf.set(row.run, [
      ...(executionsOf.get(row.run) ?? []),
      { callId: row.call_id, n: row.n },
    ]);
  }
  const epochs = await ledger.query<{ run_id: string; seq: string; epoch: string }>(
    `SELECT run_id, seq, epoch FROM "${schema}".records ORDER BY run_id, seq`,
  );
  const epochsOf = new Map<string, number[]>();
  for (const row of epochs.rows) {
    const list = epochsOf.get(row.run_id) ?? [];
    list.push(Number(row.epoch));
    epochsOf.set(row.run_id, list);
  }
  const keyed = await ledger.query<{ key: string }>(
    `SELECT DISTINCT key FROM "${schema}".ledger WHERE key IS NOT NULL`,
  );
  const ledgerKeys = new Set(keyed.rows.map((row) => row.key));
  // Per key looked up and not found: whether any of its ledger rows was visible to the lookup
  // that said so (a wrong answer) — a row it could not see is a later execution (a zombie's).
  const lookups = await ledger.query<{ key: string; visible: boolean }>(
    `SELECT r.key, coalesce(bool_or(pg_visible_in_snapshot(l.xid, r.snapshot)), false) AS visible
       FROM "${schema}".reconcile_log r LEFT JOIN "${schema}".ledger l ON l.key = r.key
      WHERE NOT r.found GROUP BY r.key`,
  );
  const notFound = new Map(lookups.rows.map((row) => [row.key, row.visible]));
  const recordsOf = new Map<string, TranscriptRecord[]>();
  for (const row of rows) {
    const read = await store.read(row.run);
    if (!read.ok) {
      breaches.lost.push(read.detail);
      continue;
    }
    const records = read.records.filter(isKnownRecord);
    recordsOf.set(row.run, records);
    if (read.records.length !== row.lastSeq + 1) {
      breaches.lost.push(`${row.run}: last_seq ${row.lastSeq} but ${read.records.length} records`);
    }
    checkReconciled(row.run, records, { ledgerKeys, notFound }, breaches, counts);
    checkRun(
      row,
      records,
      epochsOf.get(row.run) ?? [],
      executionsOf.get(row.run) ?? [],
      maxRevivals,
      breaches,
      counts,
    );
  }
  for (const row of rows) {
    const records = recordsOf.get(row.run);
    if (records !== undefined) checkJoins(row.run, records, rows, recordsOf, breaches, counts);
  }
  // Each spawn call has at most one child.
  const children = new Map<string, number>();
  for (const [run, records] of recordsOf) {
    const meta = records[0];
    if (meta?.type !== 'session-meta' || meta.parent === undefined) continue;
    const key = `${run.slice(0, run.lastIndexOf('.agents/'))} ${meta.parent.callId}`;
    children.set(key, (children.get(key) ?? 0) + 1);
  }
  for (const [key, count] of children) {
    if (count > 1) breaches.doubled.push(`spawn ${key} has ${count} children`);
  }
  return { breaches, counts };
}

function checkRun(
  row: StoreRunRow,
  records: TranscriptRecord[],
  epochs: number[],
  executions: { callId: string; n: number }[],
  maxRevivals: number,
  breaches: DistributedBreaches,
  counts: DistributedCounts,
): void {
  const run = row.run;
  // Ended: finished, or stopped at its cap with the reason recorded in its row.
  if (row.owner !== null) breaches.failed.push(`${run}: still held by ${row.owner}`);
  else if (row.status === 'finished') counts.finished += 1;
  else if (row.status === 'capped' && row.revivalsUsed >= maxRevivals) counts.capped += 1;
  else {
    // A run parked `unreadable` says why (its row's detail, as `status --database` shows it).
    const why = row.detail === null ? '' : ` (${row.detail.slice(0, 400)})`;
    breaches.failed.push(`${run}: left ${row.status} after ${row.revivalsUsed} revivals${why}`);
  }
  // No write after a takeover: the epochs never go back along the seqs.
  for (let index = 1; index < epochs.length; index += 1) {
    if ((epochs[index] as number) < (epochs[index - 1] as number)) {
      breaches.failed.push(
        `${run}: record ${index} written at epoch ${epochs[index]} after epoch ${epochs[index - 1]}`,
      );
      break;
    }
  }
  // Every call dispatched once and answered once.
  const dispatched = new Map<string, number>();
  for (const record of records) {
    if (record.type === 'tool-dispatched')
      dispatched.set(record.callId, (dispatched.get(record.callId) ?? 0) + 1);
  }
  for (const [callId, n] of dispatched) {
    if (n > 1) breaches.doubled.push(`${run}: call ${callId} dispatched ${n} times`);
  }
  const view = conversationView(records);
  const answered = new Map<string, number>();
  for (const message of view) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result')
        answered.set(part.callId, (answered.get(part.callId) ?? 0) + 1);
    }
  }
  for (const [callId, n] of answered) {
    if (n > 1) breaches.doubled.push(`${run}: call ${callId} answered ${n} times in the view`);
  }
  // A side effect only after its dispatch was durable.
  for (const { callId } of executions) {
    if (!dispatched.has(callId))
      breaches.failed.push(`${run}: call ${callId} executed with no dispatch`);
  }
  // A finished run's view is what a provider would be sent next; a run stopped at its cap may
  // hold a call in flight, which a revival past the cap would answer first.
  const sendable = row.status === 'finished' ? view : [];
  for (const violation of pairingViolations(normalizeConversation(sendable))) {
    breaches.pairing.push(`${run}: message ${violation.index}: ${violation.message}`);
  }
  // Revivals: ordinals 1, 2, … each at an epoch of its own, as many as the row counts.
  const revivals = records.flatMap((record, index) =>
    record.type === 'run-revived' ? [{ ordinal: record.ordinal, epoch: epochs[index] ?? -1 }] : [],
  );
  counts.revivals += revivals.length;
  revivals.forEach((revival, index) => {
    if (revival.ordinal !== index + 1) {
      breaches.doubleRevived.push(
        `${run}: revival ${index + 1} says it is revival ${revival.ordinal}`,
      );
    }
    if (index > 0 && revival.epoch === revivals[index - 1]?.epoch) {
      breaches.doubleRevived.push(`${run}: two revivals at epoch ${revival.epoch}`);
    }
  });
  if (row.revivalsUsed !== revivals.length) {
    breaches.doubleRevived.push(
      `${run}: the row counts ${row.revivalsUsed} revivals, the records ${revivals.length}`,
    );
  }
}

/** Every answer a parent's join got is its child's own: the child's answer, or why it has none. */
function checkJoins(
  run: string,
  records: TranscriptRecord[],
  rows: StoreRunRow[],
  recordsOf: Map<string, TranscriptRecord[]>,
  breaches: DistributedBreaches,
  counts: DistributedCounts,
): void {
  for (const record of records) {
    if (record.type !== 'message' || record.role !== 'tool') continue;
    for (const part of record.content) {
      if (part.type !== 'tool-result' || part.toolName !== 'task_wait') continue;
      if (part.isError && typeof part.output === 'string') continue; // interrupted: honest, checked by pairing
      counts.joins += 1;
      const results =
        (part.output as { results?: ({ agentId: string } & ChildOutcome)[] }).results ?? [];
      for (const result of results) {
        const child = `${run}.agents/${result.agentId}`;
        const row = rows.find((candidate) => candidate.run === child);
        const childRecords = recordsOf.get(child);
        if (row === undefined) {
          if (!(result.status === 'failed' && result.reason === 'missing')) {
            breaches.failed.push(
              `${run}: join says ${result.agentId} ${result.status}, but no such child exists`,
            );
          }
          continue;
        }
        const outcome = childRecords === undefined ? null : recordedOutcome(childRecords);
        const right =
          result.status === 'finished'
            ? outcome?.status === 'finished' && outcome.answer === result.answer
            : result.reason === 'revival-cap'
              ? row.status === 'capped'
              : false;
        if (!right) {
          breaches.failed.push(
            `${run}: join says ${result.agentId} ${JSON.stringify(result).slice(0, 120)}, the child is ${row.status}${outcome?.status === 'finished' ? ` with ${JSON.stringify(outcome.answer)}` : ''}`,
          );
        }
      }
    }
  }
}

/**
 * Every call a revival settled by a reconcile's answer, against the ledger: `completed` only for
 * a key the ledger holds, with the output `effect` gives; `did-not-happen` only for a key the
 * ledger's rows visible to the lookup that answered did not hold (`reconcile_log` keeps each
 * lookup's snapshot; a row it could not see is a zombie's later execution: `late`).
 */
function checkReconciled(
  run: string,
  records: TranscriptRecord[],
  ledger: { ledgerKeys: Set<string>; notFound: Map<string, boolean> },
  breaches: DistributedBreaches,
  counts: DistributedCounts,
): void {
  const keys = new Map<string, string>();
  const steps = new Map<string, unknown>();
  for (const record of records) {
    if (record.type === 'tool-dispatched' && record.idempotencyKey !== undefined) {
      keys.set(record.callId, record.idempotencyKey);
    }
    if (record.type === 'message' && record.role === 'assistant') {
      for (const part of record.content) {
        if (part.type === 'tool-call')
          steps.set(part.callId, (part.input as { step?: unknown }).step);
      }
    }
  }
  for (const record of records) {
    const answer = record.type === 'message' ? record.extras?.reconcile?.answer : undefined;
    if (record.type !== 'message' || answer === undefined || answer === 'unknown') continue;
    for (const part of record.content) {
      if (part.type !== 'tool-result') continue;
      const key = keys.get(part.callId);
      const at = `${run}: call ${part.callId} reconciled ${answer}`;
      if (key === undefined) {
        breaches.failed.push(`${at}, but its dispatch has no key`);
        continue;
      }
      counts.reconciled += 1;
      const charged = ledger.ledgerKeys.has(key);
      if (answer === 'completed') {
        const output = part.output as { output?: unknown } | string;
        const expected = `effect ${String(steps.get(part.callId))} done`;
        if (!charged) breaches.failed.push(`${at}, but the ledger never saw ${key}`);
        else if (typeof output !== 'string' || !output.endsWith(`\n\n${expected}`)) {
          breaches.failed.push(
            `${at} with ${JSON.stringify(output).slice(0, 80)}, not ${expected}`,
          );
        }
        continue;
      }
      const visible = ledger.notFound.get(key);
      if (visible === undefined) {
        breaches.failed.push(`${at}, but no lookup of ${key} found it missing`);
      } else if (visible) {
        breaches.failed.push(`${at}, but the ledger held ${key} when it was looked up`);
      } else if (charged) counts.late += 1;
    }
  }
}
