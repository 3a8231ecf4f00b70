/**
 * One persistence row, measured in a process of its own so that no row inherits another's
 * heap or warmed caches. Arguments: a JSON object (see {@link PersistenceJob}); prints the
 * row as one JSON line.
 *
 * @example
 * node bench/persistence-child.ts '{"system":"ours","setting":"fsync","steps":1000,...}'
 */
import type { Durability } from '../src/transcript/index.ts';
import type { PersistenceRow } from './persistence-result.ts';
import { type LangGraphDurability, runLangGraph, type SaverKind } from './run-langgraph.ts';
import { runOurs } from './run-ours.ts';

/** What the parent asks one child to measure. */
export interface PersistenceJob {
  system: 'ours' | 'langgraph';
  /** Ours: a durability. LangGraph: `memory`, `sqlite` or `postgres`. */
  setting: string;
  langGraphDurability?: LangGraphDurability;
  steps: number;
  folder: string;
  at: number[];
  postgresUrl?: string;
  /** Ours only: false measures the Session write path even when a Loop exists. */
  useLoop?: boolean;
  /** LangGraph only: the agent node calls a scripted chat model (the like-for-like row). */
  chatModel?: boolean;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '{}') as PersistenceJob;
  let row: PersistenceRow;
  try {
    row =
      job.system === 'ours'
        ? await runOurs(
            job.setting as Durability,
            job.steps,
            job.folder,
            job.at,
            job.useLoop ?? true,
          )
        : await runLangGraph(
            job.setting as SaverKind,
            job.langGraphDurability ?? 'sync',
            job.steps,
            job.folder,
            job.at,
            job.postgresUrl,
            job.chatModel ?? false,
          );
  } catch (error) {
    row = {
      ok: false,
      system: job.system,
      name: `${job.system} ${job.setting}`,
      reason: error instanceof Error ? (error.stack ?? error.message) : String(error),
    };
  }
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

await main();
