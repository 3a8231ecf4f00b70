import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import {
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import {
  FINAL_TEXT,
  OPENING_TEXT,
  STEP_TOOL_NAME,
  stepCallId,
  stepToolOutput,
} from './counting-model.ts';
import type { AtSteps, PersistenceRow } from './persistence-result.ts';
import { StepClock, summariseTimeline } from './step-timeline.ts';

/** LangGraph's own setting: persist each step before the next starts, or while it runs. */
export type LangGraphDurability = 'sync' | 'async';

/** Which checkpointer a LangGraph row uses. */
export type SaverKind = 'memory' | 'sqlite' | 'postgres';

interface SqlPool {
  query(text: string): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

/** A saver plus the bench's way of asking it how many bytes it has persisted so far. */
interface MeasuredSaver {
  saver: BaseCheckpointSaver;
  engine: string;
  bytesMeaning: string;
  syncsMeaning: string;
  bytes(): Promise<number>;
  /** Sync calls over the whole run, read once the saver is closed. */
  finish(): Promise<number | null>;
}

function memoryBytes(saver: MemorySaver): number {
  let total = 0;
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) total += value.byteLength;
    else if (typeof value === 'string') total += Buffer.byteLength(value);
    else if (Array.isArray(value)) for (const item of value) walk(item);
    else if (value !== null && typeof value === 'object')
      for (const item of Object.values(value)) walk(item);
  };
  walk(saver.storage);
  walk(saver.writes);
  return total;
}

async function memorySaver(): Promise<MeasuredSaver> {
  const saver = new MemorySaver();
  return {
    saver,
    engine: 'MemorySaver (in memory, nothing persisted)',
    bytesMeaning: 'bytes of serialised checkpoints and writes held in memory',
    syncsMeaning: 'none: nothing reaches a disk',
    bytes: async () => memoryBytes(saver),
    finish: async () => 0,
  };
}

// Not a devDependency: its native module (better-sqlite3) is compiled by `npm ci` under the
// machine's Node (20 here) and cannot load in the pinned Node 24, and compiling it costs minutes
// of every CI install. Install it by hand to measure this row where it can load.
const SQLITE_MODULE = '@langchain/langgraph-checkpoint-sqlite';

interface SqliteModule {
  SqliteSaver: { fromConnString(path: string): MeasuredSaver['saver'] };
}

async function sqliteSaver(folder: string): Promise<MeasuredSaver> {
  let module: SqliteModule;
  try {
    module = (await import(SQLITE_MODULE)) as SqliteModule;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `${SQLITE_MODULE} is not installed or its native module does not load on Node ${process.versions.node} (${message})`,
    );
  }
  const path = join(folder, `langgraph-${process.pid}.sqlite`);
  await rm(path, { force: true });
  const saver = module.SqliteSaver.fromConnString(path);
  const { stat } = await import('node:fs/promises');
  const size = async () => {
    let total = 0;
    for (const suffix of ['', '-wal', '-journal']) {
      total += await stat(`${path}${suffix}`).then(
        (info) => info.size,
        () => 0,
      );
    }
    return total;
  };
  return {
    saver,
    engine: 'SqliteSaver (better-sqlite3)',
    bytesMeaning: 'size of the SQLite database and its WAL',
    syncsMeaning: 'not counted (inside SQLite)',
    bytes: size,
    finish: async () => null,
  };
}

const PG_MODULE = 'pg';

async function postgresSaver(url: string): Promise<MeasuredSaver> {
  const { PostgresSaver } = await import('@langchain/langgraph-checkpoint-postgres');
  const pg = (await import(PG_MODULE)) as {
    default: { Pool: new (config: { connectionString: string; max: number }) => SqlPool };
  };
  const schema = `bench_${process.pid}`;
  const probe = new pg.default.Pool({ connectionString: url, max: 1 });
  await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await probe.query(`CREATE SCHEMA ${schema}`);
  const saver = PostgresSaver.fromConnString(url, { schema });
  await saver.setup();
  await probe.query("SELECT pg_stat_reset_shared('wal')");
  const start = String((await probe.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0]?.lsn);
  const settings = await probe.query(
    "SELECT name, setting FROM pg_settings WHERE name IN ('fsync','synchronous_commit','wal_sync_method','server_version') ORDER BY name",
  );
  const described = settings.rows.map((row) => `${row.name}=${row.setting}`).join(', ');
  return {
    saver,
    engine: `PostgresSaver (${described})`,
    bytesMeaning: 'WAL bytes PostgreSQL generated (pg_current_wal_lsn difference)',
    syncsMeaning: 'WAL syncs (pg_stat_wal.wal_sync, after the saver disconnected)',
    bytes: async () => {
      const result = await probe.query(
        `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '${start}') AS bytes`,
      );
      return Number(result.rows[0]?.bytes);
    },
    finish: async () => {
      await saver.end();
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await probe.query('SELECT pg_stat_force_next_flush()');
      const result = await probe.query('SELECT wal_sync FROM pg_stat_wal');
      await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await probe.end();
      return Number(result.rows[0]?.wal_sync);
    },
  };
}

/**
 * A LangChain chat model that answers as the scripted model of our rows does, with no latency:
 * LangGraph's counterpart of the `MockLanguageModelV4` our Loop calls. Like a real agent node's
 * model it is handed the whole conversation on every call.
 */
class ScriptedChatModel extends BaseChatModel {
  readonly #reply: (messages: BaseMessage[]) => AIMessage;

  constructor(reply: (messages: BaseMessage[]) => AIMessage) {
    super({});
    this.#reply = reply;
  }

  _llmType(): string {
    return 'scripted';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.#reply(messages);
    const text = typeof message.content === 'string' ? message.content : '';
    return { generations: [{ message, text }] };
  }
}

/**
 * Run the same scripted `steps`-step agent as {@link ../bench/run-ours.ts} through a LangGraph
 * StateGraph (an agent node answering as the scripted model does, and the prebuilt ToolNode
 * with the same tool), checkpointed by the chosen saver. By default the agent node is a plain
 * function, not a chat model: LangGraph pays no model-library cost, which only flatters it.
 * With `chatModel`, the node calls a scripted LangChain chat model with the conversation, as
 * ours calls a mock model through the AI SDK: the like-for-like row.
 *
 * @example
 * const row = await runLangGraph('postgres', 'sync', 1000, folder, [10, 100, 1000], url);
 */
export async function runLangGraph(
  kind: SaverKind,
  durability: LangGraphDurability,
  steps: number,
  folder: string,
  at: readonly number[],
  postgresUrl?: string,
  chatModel = false,
): Promise<PersistenceRow> {
  const name = `langgraph ${kind}${kind === 'memory' ? '' : ` ${durability}`}${chatModel ? ' (chat model)' : ''}`;
  await mkdir(folder, { recursive: true });
  let measured: MeasuredSaver;
  try {
    if (kind === 'memory') measured = await memorySaver();
    else if (kind === 'sqlite') measured = await sqliteSaver(folder);
    else {
      if (postgresUrl === undefined) throw new Error('no PostgreSQL server');
      measured = await postgresSaver(postgresUrl);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      system: 'langgraph',
      name,
      reason: message.replace(/\s+/g, ' ').slice(0, 400),
    };
  }
  const clock = new StepClock();
  const bytesAt: AtSteps = {};
  const scriptedReply = (step: number): AIMessage => stepReply(step, steps);
  const model = chatModel
    ? new ScriptedChatModel((messages) => {
        let answered = 0;
        for (const message of messages) if (message.getType() === 'tool') answered += 1;
        return scriptedReply(answered + 1);
      })
    : null;
  const agent = async (state: typeof MessagesAnnotation.State) => {
    let answered = 0;
    for (const message of state.messages) if (message.getType() === 'tool') answered += 1;
    const step = answered + 1;
    clock.mark(step);
    if (at.includes(step - 1)) {
      bytesAt[String(step - 1)] = await clock.pause(() => measured.bytes());
    }
    const reply = scriptedReply(step);
    return { messages: [model === null ? reply : await model.invoke(state.messages)] };
  };
  const graph = stepGraph(agent, measured.saver);
  clock.start();
  const final = await graph.invoke(
    { messages: [new HumanMessage(OPENING_TEXT)] },
    {
      configurable: { thread_id: `bench-${process.pid}` },
      recursionLimit: steps * 2 + 10,
      durability,
    },
  );
  clock.stop();
  const summary = summariseTimeline(clock, at);
  const bytesTotal = await measured.bytes();
  const syncs = await measured.finish();
  const last = final.messages.at(-1);
  const notes: string[] = [];
  if (last?.content !== FINAL_TEXT) notes.push('the run did not end with the final text');
  const stepsMs = (clock.marks.at(-1) ?? clock.startedAt) - clock.startedAt;
  if (durability === 'async' && summary.totalMs > stepsMs * 1.5) {
    notes.push(
      `checkpoints are written behind the steps: the last step started after ${(stepsMs / 1000).toFixed(1)} s, ` +
        `and invoke returned once the writes caught up, at ${(summary.totalMs / 1000).toFixed(1)} s; ` +
        'its per-step figures are the steps alone',
    );
  }
  return {
    ok: true,
    system: 'langgraph',
    name,
    engine: `StateGraph + ToolNode${chatModel ? ' + a scripted chat model' : ''}, ${measured.engine}, durability ${durability}`,
    steps,
    bytesAt,
    bytesTotal,
    bytesMeaning: measured.bytesMeaning,
    syncs,
    syncsMeaning: measured.syncsMeaning,
    notes,
    ...summary,
  };
}

/** The scripted model's reply at `step` of a run of `steps`: a call of the step tool, then the final text. */
export function stepReply(step: number, steps: number): AIMessage {
  return step > steps
    ? new AIMessage({ content: FINAL_TEXT })
    : new AIMessage({
        content: '',
        tool_calls: [
          { id: stepCallId(step), name: STEP_TOOL_NAME, args: { value: step }, type: 'tool_call' },
        ],
      });
}

/**
 * The bench's LangGraph agent: `agent` (the model node) and a ToolNode with the step tool,
 * looping until the model answers without a call, checkpointed by `saver`.
 */
export function stepGraph(
  agent: (
    state: typeof MessagesAnnotation.State,
  ) => Promise<{ messages: BaseMessage[] }> | { messages: BaseMessage[] },
  saver: BaseCheckpointSaver,
) {
  const increment = tool(async ({ value }: { value: number }) => stepToolOutput(value), {
    name: STEP_TOOL_NAME,
    description: 'Count one up.',
    schema: z.object({ value: z.number() }),
  });
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode([increment]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state) => {
      const last = state.messages.at(-1);
      return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
    })
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
}
