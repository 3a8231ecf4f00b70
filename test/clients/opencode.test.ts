import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { OPENCODE_TESTED } from '../../src/repair/opencode-plan.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { type ScriptedServer, startChatServer } from '../../src/testing/provider-servers.ts';
import {
  makeOpencodeHome,
  OPENCODE_RELEASES,
  type OpencodeHome,
  type OpencodeRelease,
  runArgs,
  runOpencode,
  serveModelFrom,
  startOpencode,
  titleAside,
} from './opencode-driver.ts';
import { assertDryRunAndScanLive } from './support/alive-refusal.ts';
import { repairCli, waitFor } from './support/client-run.ts';
import { killTree, processesMentioning, processTree } from './support/process-tree.ts';

/*
 * The real opencode (pinned in test/clients/package.json), offline against a strict scripted
 * Chat Completions server on 127.0.0.1: the model has opencode run long bash commands
 * (`sleep 60; echo done > marker`). While they run, `llm-agent repair` must refuse the
 * database opencode holds and write nothing; then opencode and every process below it are
 * SIGKILLed, leaving tool parts `running`. The repair sets them to opencode's failed-tool state
 * with our text, in one transaction with their events, after a consistent backup; opencode,
 * resuming the session, must send our text for every cut-off call (not its own "[Tool
 * execution was interrupted]"), and the server, which refuses any request that breaks OpenAI's
 * pairing rules with OpenAI's 400, must accept the request. Nothing is skipped.
 */

let current = OPENCODE_RELEASES.at(-1) as OpencodeRelease;
const progress = (text: string) => console.log(`[opencode ${current.version}] ${text}`);

const homes: OpencodeHome[] = [];
const servers: ScriptedServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
  for (const home of homes) await rm(home.root, { recursive: true, force: true });
});

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string }[];
  tool_call_id?: string;
}

/** The tool messages of a request, by the call they answer (content as text). */
function toolMessages(request: Record<string, unknown> | undefined): Map<string, string> {
  const messages = (request?.messages ?? []) as ChatMessage[];
  return new Map(
    messages.flatMap((message) =>
      message.role === 'tool'
        ? [
            [
              message.tool_call_id ?? '',
              typeof message.content === 'string'
                ? message.content
                : JSON.stringify(message.content),
            ] as const,
          ]
        : [],
    ),
  );
}

/**
 * What a repair of the database could have left: tool parts in the error state or holding our
 * text, and events holding our text. opencode itself rewrites its database while it runs (a
 * running bash part's output, its own bookkeeping), so a refusal is checked by what it would
 * have written, not by the bytes of a database opencode still owns.
 */
function repairTraces(database: string): {
  erroredParts: number;
  ourParts: number;
  ourEvents: number;
} {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    const count = (sql: string, ...values: string[]) =>
      Number(db.prepare(sql).get(...values)?.count ?? 0);
    return {
      erroredParts: count(
        "SELECT count(*) AS count FROM part WHERE json_extract(data, '$.type') = 'tool' AND json_extract(data, '$.state.status') = 'error'",
      ),
      ourParts: count(
        'SELECT count(*) AS count FROM part WHERE instr(data, ?) > 0',
        INTERRUPTED_MESSAGE,
      ),
      ourEvents: count(
        'SELECT count(*) AS count FROM event WHERE instr(data, ?) > 0',
        INTERRUPTED_MESSAGE,
      ),
    };
  } finally {
    db.close();
  }
}

/** The tool parts of the database: id, callID, state. */
function toolParts(
  database: string,
): { id: string; callID: string; state: Record<string, unknown> }[] {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    return db
      .prepare("SELECT id, data FROM part WHERE json_extract(data, '$.type') = 'tool' ORDER BY id")
      .all()
      .map((row) => {
        const data = JSON.parse(String(row.data)) as {
          callID: string;
          state: Record<string, unknown>;
        };
        return { id: String(row.id), callID: data.callID, state: data.state };
      });
  } finally {
    db.close();
  }
}

/** The id of the database's one session. */
function sessionOf(database: string): string {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    return String(db.prepare('SELECT id FROM session').get()?.id);
  } finally {
    db.close();
  }
}

/** Each part's last `message.part.updated` event's part state, by part id: what a rebuild from the log gives. */
function loggedStates(database: string): Map<string, unknown> {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    const states = new Map<string, unknown>();
    const rows = db
      .prepare(
        "SELECT data FROM event WHERE type = 'message.part.updated.1' ORDER BY aggregate_id, seq",
      )
      .all();
    for (const row of rows) {
      const data = JSON.parse(String(row.data)) as { part: { id: string; state?: unknown } };
      states.set(data.part.id, data.part.state);
    }
    const gaps = db
      .prepare(
        `SELECT s.aggregate_id FROM event_sequence s
         WHERE s.seq <> (SELECT max(seq) FROM event e WHERE e.aggregate_id = s.aggregate_id)
            OR (SELECT count(*) FROM event e WHERE e.aggregate_id = s.aggregate_id) <> s.seq + 1`,
      )
      .all();
    assert.deepEqual(gaps, [], "every session's events are numbered 0…seq without a gap");
    return states;
  } finally {
    db.close();
  }
}

/** Run `llm-agent repair … --json`; its exit code and parsed outcomes. */
async function cli(
  ...args: string[]
): Promise<{ code: number | null; outcomes: Record<string, unknown>[] }> {
  const { code, stdout, stderr } = await repairCli([...args, '--json']);
  try {
    return { code, outcomes: JSON.parse(stdout) as Record<string, unknown>[] };
  } catch {
    throw new Error(`llm-agent repair printed no JSON (exit ${code}):\n${stdout}${stderr}`);
  }
}

/**
 * opencode runs `count` long commands at once; `repair` refuses while it lives; it is killed
 * with its whole tree; the database is repaired and the session resumed. With `control`, a
 * copy of the broken database is resumed first, unrepaired, to show what opencode sends today.
 */
async function crashRepairResume(count: number, control: boolean): Promise<void> {
  const home = await makeOpencodeHome();
  home.bin = current.bin;
  homes.push(home);
  const marker = (n: number) => join(home.work, `marker-${n}`);
  const started = (n: number) => join(home.work, `started-${n}`);
  const numbers = Array.from({ length: count }, (_, index) => index + 1);
  const calls = numbers.map((n) => ({
    id: `call_long_${n}`,
    name: 'bash',
    input: {
      command: `echo started > ${started(n)}; sleep 60; echo done > ${marker(n)}`,
      description: `long command ${n}`,
    },
  }));
  const server = await startChatServer(
    [
      { text: `Running ${count} long command(s).`, calls },
      ...(control ? [{ text: 'Resumed without repair.' }] : []),
      { text: 'I will check the markers before doing anything else.' },
    ],
    { aside: titleAside },
  );
  servers.push(server);
  await serveModelFrom(home, server.url);

  progress(`starting opencode: the model calls bash ${count}× (sleep 60; echo done > marker)`);
  const opencode = startOpencode(home, runArgs('Run the long commands.'));
  const pid = opencode.child.pid as number;
  try {
    await waitFor(
      () => numbers.every((n) => existsSync(started(n))),
      // opencode's first start migrates a new database: minutes on a loaded machine.
      180_000,
      `all ${count} command(s) to start (opencode output: ${opencode.output()})`,
    );

    // Alive inside its tools: refused, and nothing of a repair written (no backup, no part
    // or event of ours; opencode's own writes meanwhile are not ours to count).
    const none = { erroredParts: 0, ourParts: 0, ourEvents: 0 };
    assert.deepEqual(repairTraces(home.database), none, 'no repair before');
    const live = await cli(home.database);
    assert.equal(live.code, 7, JSON.stringify(live.outcomes));
    assert.equal(live.outcomes[0]?.reason, 'live');
    assert.match(String(live.outcomes[0]?.detail), /pid \d+ .*opencode\.db/);
    await assertDryRunAndScanLive(home.database);
    assert.deepEqual(repairTraces(home.database), none, 'the refusal wrote nothing');
    assert.deepEqual(
      (await import('node:fs'))
        .readdirSync(join(home.database, '..'))
        .filter((name) => name.includes('.bak-')),
      [],
    );
    progress(
      `alive inside its tools: repair refused (exit 7, ${String(live.outcomes[0]?.detail).split(': ').at(-1)?.slice(0, 60)}…), nothing written`,
    );
  } catch (error) {
    killTree(pid);
    throw error;
  }
  const tree = processTree(pid);
  progress(`killing opencode and its ${tree.length - 1} descendant(s) with SIGKILL`);
  killTree(pid);
  const exit = await Promise.race([
    opencode.exited,
    new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 10_000)),
  ]);
  assert.notEqual(exit, 'alive', 'opencode survived SIGKILL');
  await waitFor(
    () => processesMentioning(home.work).length === 0,
    10_000,
    'every command to be gone',
  );

  // The fault: no command finished, and each call's part is left running.
  for (const n of numbers) assert.equal(existsSync(marker(n)), false, `marker-${n} written`);
  const stuck = toolParts(home.database);
  assert.deepEqual(
    stuck.map((part) => [part.callID, part.state.status]),
    calls.map((call) => [call.id, 'running']),
  );
  const sessionId = sessionOf(home.database);
  progress(`killed; ${count} tool part(s) left running in ${sessionId}`);

  if (control) {
    const copy = await makeOpencodeHome('opencode-control-');
    copy.bin = current.bin;
    homes.push(copy);
    await cp(join(home.home, '.local'), join(copy.home, '.local'), { recursive: true });
    copy.work = home.work; // the session's recorded directory, and its opencode.json
    const run = await runOpencode(copy, runArgs('continue', sessionId), 120_000);
    assert.equal(run.code, 0, run.output);
    const sent = toolMessages(server.requests.at(-1));
    for (const call of calls)
      assert.match(sent.get(call.id) ?? '', /\[Tool execution was interrupted\]/);
    assert.equal(
      toolParts(join(copy.home, '.local', 'share', 'opencode', 'opencode.db'))[0]?.state.status,
      'running',
    );
    progress(
      'control: resumed unrepaired, opencode sends "[Tool execution was interrupted]" and leaves the part running',
    );
  }

  // opencode is dead: no flag needed.
  const dry = await cli(home.database, '--dry-run');
  assert.equal(dry.code, 3, JSON.stringify(dry.outcomes));
  const repaired = await cli(home.database);
  assert.equal(repaired.code, 0, JSON.stringify(repaired.outcomes));
  const outcome = repaired.outcomes[0] as {
    status: string;
    calls: { callId: string }[];
    backup: string;
    detection: unknown;
  };
  assert.equal(outcome.status, 'repaired');
  assert.deepEqual(outcome.detection, {
    format: 'opencode',
    version: current.version,
    supported: true,
  });
  assert.deepEqual(
    outcome.calls.map((call) => call.callId).sort(),
    calls.map((call) => call.id).sort(),
  );
  // The backup is the database as it was: the parts still running.
  assert.deepEqual(
    toolParts(outcome.backup).map((part) => part.state.status),
    calls.map(() => 'running'),
  );
  const fixed = toolParts(home.database);
  for (const part of fixed) {
    assert.equal(part.state.status, 'error');
    assert.equal(part.state.error, INTERRUPTED_MESSAGE);
    assert.equal(typeof (part.state.time as { end?: unknown }).end, 'number');
  }
  const logged = loggedStates(home.database);
  for (const part of fixed)
    assert.deepEqual(logged.get(part.id), part.state, 'the event log ends in the repaired state');
  progress(
    `repaired: ${count} part(s) set to the error state with their events; backup ${outcome.backup.split('/').at(-1)}`,
  );

  const before = server.requests.length;
  const run = await runOpencode(home, runArgs('continue', sessionId), 120_000);
  assert.equal(run.code, 0, run.output);
  assert.deepEqual(server.rejections, [], 'the strict server refused a request');
  const turns = server.requests.slice(before).filter((request) => request.tools !== undefined);
  assert.equal(turns.length, 1);
  assert.equal(server.remaining(), 0);
  const sent = toolMessages(turns[0]);
  for (const call of calls) assert.equal(sent.get(call.id), INTERRUPTED_MESSAGE, call.id);
  assert.doesNotMatch(JSON.stringify(turns[0]), /Tool execution was interrupted/);
  progress('resumed: opencode sent our INTERRUPTED_MESSAGE for every cut-off call; no 400');

  const again = await cli(home.database);
  assert.equal(again.code, 0);
  assert.equal(again.outcomes[0]?.status, 'clean');
  for (const n of numbers)
    assert.equal(existsSync(marker(n)), false, 'the killed command never ran again');
  progress('a second repair is clean; no marker was ever written');
}

test('every release tested end to end is one repair accepts', () => {
  assert.deepEqual(
    OPENCODE_RELEASES.map((release) => release.version),
    [...OPENCODE_TESTED],
  );
});

for (const tested of OPENCODE_RELEASES) {
  describe(`opencode ${tested.version} killed mid-tool, repaired, resumed (${tested.bin})`, () => {
    test('one bash call cut off', { timeout: 400_000 }, async () => {
      current = tested;
      await crashRepairResume(1, true);
    });

    test('two parallel bash calls cut off', { timeout: 300_000 }, async () => {
      current = tested;
      await crashRepairResume(2, false);
    });
  });
}
