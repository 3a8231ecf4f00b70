import { join } from 'node:path';
import { startLocalPostgres } from './local-postgres.ts';
import type { PersistenceJob } from './persistence-child.ts';
import type { PersistenceRow } from './persistence-result.ts';
import { runChild } from './run-child.ts';

/** Goal 3's figures: every row, and the ratios the goals are judged on. */
export interface PersistenceSection {
  steps: number;
  at: number[];
  postgres: string;
  rows: PersistenceRow[];
  /** LangGraph's durable total time over ours (fsync), per durable LangGraph row. */
  speedupOverDurable: Record<string, number>;
  /**
   * Bytes per step at the last sample over bytes per step at the one before (1000 and 100 in
   * a full run): 1 is linear in steps; 10 would be quadratic.
   */
  bytesGrowth: Record<string, number>;
}

const CHILD = new URL('./persistence-child.ts', import.meta.url).pathname;

/**
 * Goal 3: the scripted run through our Loop under each durability, and through LangGraph with
 * MemorySaver, SqliteSaver (when its native module loads) and PostgresSaver (against a
 * PostgreSQL this starts and stops; the row is skipped, with the reason, when there is none).
 * Each row runs in a process of its own, one after another.
 *
 * @example
 * const section = await persistenceSection('bench/data', 1000, console.log);
 */
export async function persistenceSection(
  dataFolder: string,
  steps: number,
  log: (line: string) => void,
): Promise<PersistenceSection> {
  const at = [10, 100, 1000].filter((step) => step <= steps);
  if (!at.includes(steps)) at.push(steps);
  const folder = join(dataFolder, 'persistence');
  const jobs: PersistenceJob[] = [
    { system: 'ours', setting: 'fsync', steps, folder, at },
    { system: 'ours', setting: 'flush', steps, folder, at },
    { system: 'ours', setting: 'none', steps, folder, at },
    { system: 'ours', setting: 'fsync', steps, folder, at, useLoop: false },
    { system: 'langgraph', setting: 'memory', steps, folder, at },
    { system: 'langgraph', setting: 'sqlite', langGraphDurability: 'sync', steps, folder, at },
  ];
  log('  starting a local PostgreSQL for PostgresSaver');
  const server = await startLocalPostgres(join(dataFolder, 'postgres'));
  const postgres = server.ok ? server.version : `absent: ${server.reason}`;
  for (const [durability, chatModel] of [
    ['sync', false],
    ['sync', true],
    ['async', false],
  ] as const) {
    const job: PersistenceJob = {
      system: 'langgraph',
      setting: 'postgres',
      langGraphDurability: durability,
      steps,
      folder,
      at,
    };
    if (chatModel) job.chatModel = true;
    if (server.ok) job.postgresUrl = server.url;
    jobs.push(job);
  }
  const rows: PersistenceRow[] = [];
  try {
    for (const job of jobs) {
      const label = `${job.system} ${job.setting}${job.langGraphDurability === undefined ? '' : ` ${job.langGraphDurability}`}${job.chatModel === true ? ' (chat model)' : ''}`;
      if (job.setting === 'postgres' && !server.ok) {
        rows.push({ ok: false, system: 'langgraph', name: label, reason: server.reason });
        log(`  ${label}: skipped (${server.reason})`);
        continue;
      }
      const answer = await runChild<PersistenceRow>(CHILD, [JSON.stringify(job)]);
      const row: PersistenceRow = answer.ok
        ? answer.value
        : { ok: false, system: job.system, name: label, reason: answer.reason };
      rows.push(row);
      log(
        row.ok
          ? `  ${row.name}: ${(row.totalMs / 1000).toFixed(2)} s for ${row.steps} steps`
          : `  ${row.name}: skipped (${row.reason.split('\n')[0]})`,
      );
    }
  } finally {
    if (server.ok) await server.stop();
  }
  const ours = rows.find((row) => row.ok && row.name === 'ours fsync');
  const speedupOverDurable: Record<string, number> = {};
  const bytesGrowth: Record<string, number> = {};
  for (const row of rows) {
    if (!row.ok) continue;
    if (ours?.ok === true && row.system === 'langgraph' && row.name !== 'langgraph memory') {
      speedupOverDurable[row.name] = row.totalMs / ours.totalMs;
    }
    const lowStep = at.at(-2) ?? 1;
    const high = row.bytesAt[String(steps)];
    const low = row.bytesAt[String(lowStep)];
    if (high !== undefined && low !== undefined && low > 0) {
      bytesGrowth[row.name] = high / steps / (low / lowStep);
    }
  }
  return { steps, at, postgres, rows, speedupOverDurable, bytesGrowth };
}
