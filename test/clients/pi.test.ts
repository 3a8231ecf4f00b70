import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { piFormat } from '../../src/repair/pi-format.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { type ScriptedServer, startChatServer } from '../../src/testing/provider-servers.ts';
import {
  makePiHome,
  PI_PINNED,
  PI_RELEASES,
  PI_VERSION,
  type PiHome,
  type PiRelease,
  piArgs,
  runPi,
  serveModelsFrom,
  sessionFiles,
  startPi,
} from './pi-driver.ts';
import { repairCli, waitFor } from './support/client-run.ts';
import { killTree, processesMentioning, processTree } from './support/process-tree.ts';
import { assertRefusedWhileAlive } from './support/alive-refusal.ts';
import { recordRelease } from './support/releases.ts';
import { TESTED_RELEASES } from '../../src/repair/tested-releases.ts';

/*
 * The real pi coding agent (the pinned `@mariozechner/pi-coding-agent`), offline against a
 * strict scripted Chat Completions server on 127.0.0.1: the model has pi run long bash commands
 * (`sleep 60; echo done > marker`), pi and every process below it are SIGKILLed while they run,
 * and the session is left with calls that have no result. `llm-agent repair` answers them; pi,
 * resuming the session, must send our answers (not its own "No result provided"), and the
 * server, which refuses any request that breaks OpenAI's pairing rules with OpenAI's 400, must
 * accept the request. Nothing here is skipped: if pi cannot run, the test fails.
 */

let current: PiRelease = PI_PINNED;
const progress = (text: string) => console.log(`[pi ${current.version}] ${text}`);

const homes: PiHome[] = [];
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

/** The tool messages of a request, by the call they answer. */
function toolMessages(request: Record<string, unknown> | undefined): Map<string, unknown> {
  const messages = (request?.messages ?? []) as ChatMessage[];
  return new Map(
    messages.flatMap((message) =>
      message.role === 'tool' ? [[message.tool_call_id ?? '', message.content] as const] : [],
    ),
  );
}

/** Run `llm-agent repair … --json` (the CLI, from source); its exit code and parsed JSON output. */
async function cli(...args: string[]): Promise<{ code: number | null; outcomes: unknown[] }> {
  const { code, stdout, stderr } = await repairCli([...args, '--json']);
  try {
    return { code, outcomes: JSON.parse(stdout) as unknown[] };
  } catch {
    throw new Error(`llm-agent repair printed no JSON (exit ${code}):\n${stdout}${stderr}`);
  }
}

/**
 * pi runs `count` long commands at once and is killed with its whole tree while they run; the
 * session is repaired and resumed. With `control`, a copy of the broken session is resumed
 * first, unrepaired, to show what pi sends today.
 */
async function crashRepairResume(count: number, control: boolean): Promise<void> {
  const release = current;
  const home = await makePiHome('pi-client-', release);
  homes.push(home);
  const marker = (n: number) => join(home.work, `marker-${n}`);
  const started = (n: number) => join(home.work, `started-${n}`);
  const numbers = Array.from({ length: count }, (_, index) => index + 1);
  const calls = numbers.map((n) => ({
    id: `call_long_${n}`,
    name: 'bash',
    input: { command: `echo started > ${started(n)}; sleep 60; echo done > ${marker(n)}` },
  }));
  const server = await startChatServer([
    { text: `Running ${count} long command(s).`, calls },
    ...(control ? [{ text: 'Resumed without repair.' }] : []),
    { text: 'I will check the markers before doing anything else.' },
  ]);
  servers.push(server);
  await serveModelsFrom(home, server.url);

  progress(`starting pi: the model calls bash ${count}× (sleep 60; echo done > marker)`);
  const pi = startPi(home, piArgs('Run the long commands.'));
  try {
    // pi 0.73 runs the calls of one message at once; older releases one after another, so
    // only the first has started when all are in the session file.
    await waitFor(
      () => {
        if (!existsSync(started(1))) return false;
        const [session] = sessionFiles(home);
        const text = session === undefined ? '' : readFileSync(session, 'utf8');
        return calls.every((call) => text.includes(`"id":"${call.id}"`));
      },
      45_000,
      `the first command to start with all ${count} call(s) in the session (pi output: ${pi.output()})`,
    );
  } catch (error) {
    killTree(pi.child.pid as number);
    throw error;
  }
  if (release.pinned && count === 1) {
    // Alive inside its tool (pi keeps no file open and writes nothing meanwhile): refused
    // without any flag, nothing written.
    try {
      const [session] = sessionFiles(home);
      assert.ok(session !== undefined, 'pi wrote its session file before the tool ran');
      const detail = await assertRefusedWhileAlive(session);
      progress(`alive inside its tool: refused (${detail.slice(-90)})`);
    } catch (error) {
      killTree(pi.child.pid as number);
      throw error;
    }
  }
  const tree = processTree(pi.child.pid as number);
  progress(`the command(s) run; killing pi and its ${tree.length - 1} descendant(s) with SIGKILL`);
  const killed = killTree(pi.child.pid as number);
  const exit = await Promise.race([
    pi.exited,
    new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 10_000)),
  ]);
  assert.notEqual(exit, 'alive', 'pi survived SIGKILL');
  assert.equal((exit as { signal: string | null }).signal, 'SIGKILL');
  const running = numbers.filter((n) => existsSync(started(n))).length;
  assert.ok(
    killed.length >= 1 + 2 * running,
    `killed ${killed.length}: pi, bash and sleep per call`,
  );
  await waitFor(
    () => processesMentioning(home.work).length === 0,
    10_000,
    'every command of the session to be gone',
  );

  // The fault: no command finished (none can now: no process of theirs is left), and the
  // session ends with the assistant message whose calls have no result.
  for (const n of numbers) assert.equal(existsSync(marker(n)), false, `marker-${n} written`);
  const [file, ...others] = sessionFiles(home);
  assert.ok(file !== undefined && others.length === 0, 'pi wrote one session file');
  const original = await readFile(file);
  const last = JSON.parse(original.toString('utf8').trimEnd().split('\n').at(-1) as string);
  assert.equal(last.message?.role, 'assistant');
  assert.equal(last.message?.stopReason, 'toolUse');
  assert.deepEqual(
    last.message.content
      .filter((block: { type: string }) => block.type === 'toolCall')
      .map((block: { id: string }) => block.id),
    calls.map((call) => call.id),
  );
  progress(`killed; the session ends with ${count} unanswered toolCall(s): ${basename(file)}`);

  // A file written a moment ago may still be its client's: refused without --force.
  const live = await repairSession(file, { quietMs: 60_000 });
  assert.equal(live.status, 'refused');
  assert.equal(live.status === 'refused' && live.reason, 'live');
  assert.ok((await readFile(file)).equals(original), 'the refusal wrote nothing');
  progress('without --force the just-changed file is refused as live');

  if (control) {
    const copy = join(file, '..', 'unrepaired-copy.jsonl');
    await copyFile(file, copy);
    const run = await runPi(home, piArgs('continue', '--session', copy), 60_000);
    assert.equal(run.code, 0, run.output);
    const sent = toolMessages(server.requests.at(-1));
    for (const call of calls) assert.equal(sent.get(call.id), 'No result provided');
    progress('control: resumed unrepaired, pi sends its own "No result provided"');
  }

  // pi is dead (proved above), so --force is right here.
  const repaired = await cli(file, '--force');
  assert.equal(repaired.code, 0, JSON.stringify(repaired.outcomes));
  const [outcome] = repaired.outcomes as {
    status: string;
    calls: { callId: string }[];
    backup: string;
    detection: { session?: { id?: string; cwd?: string } };
  }[];
  assert.equal(outcome?.status, 'repaired');
  const { session: recorded, ...detection } = outcome?.detection ?? {};
  assert.deepEqual(detection, { format: 'pi', version: 'session v3', supported: true });
  // What liveness matches a running client against: the header's id and working folder.
  assert.equal(typeof recorded?.id, 'string');
  assert.equal(typeof recorded?.cwd, 'string');
  assert.deepEqual(
    outcome.calls.map((call) => call.callId),
    calls.map((call) => call.id),
  );
  const repairedBytes = await readFile(file);
  assert.ok(repairedBytes.subarray(0, original.length).equals(original), 'append-only');
  assert.ok((await readFile(outcome.backup)).equals(original), 'byte-exact backup');
  progress(`repaired: ${count} toolResult entr${count === 1 ? 'y' : 'ies'} appended`);

  const before = server.requests.length;
  const run = await runPi(home, piArgs('continue', '--session', file), 60_000);
  assert.equal(run.code, 0, run.output);
  assert.deepEqual(server.rejections, [], 'the strict server refused a request');
  assert.equal(server.requests.length, before + 1);
  assert.equal(server.remaining(), 0);
  const request = server.requests.at(-1);
  const sent = toolMessages(request);
  for (const call of calls) assert.equal(sent.get(call.id), INTERRUPTED_MESSAGE, call.id);
  assert.doesNotMatch(JSON.stringify(request), /No result provided/);
  const messages = (request?.messages ?? []) as ChatMessage[];
  const assistant = messages.findIndex((message) => (message.tool_calls?.length ?? 0) > 0);
  assert.deepEqual(
    messages.slice(assistant + 1, assistant + 1 + count).map((message) => message.tool_call_id),
    calls.map((call) => call.id),
    'the answers come right after the calls',
  );
  recordRelease('pi', release.version, `repaired-resumed-${count}`, file);
  progress('resumed: pi sent our INTERRUPTED_MESSAGE for every cut-off call; no 400');

  // pi went on from our entries; a second repair finds nothing to do.
  const again = await cli(file);
  assert.equal(again.code, 0);
  assert.equal((again.outcomes[0] as { status: string }).status, 'clean');
  for (const n of numbers) assert.equal(existsSync(marker(n)), false);
  progress('a second repair of the resumed session is clean');
}

test('every installed release is one repair was tested with, and the other way round', () => {
  assert.equal(PI_VERSION, '0.73.1');
  assert.deepEqual(
    PI_RELEASES.map((release) => release.version),
    TESTED_RELEASES.pi,
  );
});

for (const tested of PI_RELEASES) {
  describe(`pi ${tested.version} killed mid-tool, repaired, resumed (${tested.cli})`, () => {
    // The control (the broken session resumed unrepaired) shows what the pinned pi sends.
    test('one bash call cut off', { timeout: 180_000 }, async () => {
      current = tested;
      await crashRepairResume(1, tested.pinned);
    });

    test('two parallel bash calls cut off', { timeout: 180_000 }, async () => {
      current = tested;
      await crashRepairResume(2, false);
    });
  });
}

describe(`pi ${PI_VERSION}, the pinned release, and an old session`, () => {
  test('a version-1 session pi wrote in 2025: repaired, pi 0.73.1 migrates it and sends our results', {
    timeout: 120_000,
  }, async () => {
    const home = await makePiHome();
    homes.push(home);
    const server = await startChatServer([{ text: 'I will look before I read again.' }]);
    servers.push(server);
    await serveModelsFrom(home, server.url);
    const folder = join(home.home, '.pi', 'agent', 'sessions', '--work--');
    await mkdir(folder, { recursive: true });
    const file = join(
      folder,
      '2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl',
    );
    // pi -p refuses a session whose recorded cwd does not exist: point it at our work folder.
    const text = (
      await readFile(
        new URL('../fixtures/foreign/pi/pi-mono-large-session.head-6.v1.jsonl', import.meta.url),
        'utf8',
      )
    ).replace(
      '"cwd":"/Users/badlogic/workspaces/pi-mono"',
      JSON.stringify({ cwd: home.work }).slice(1, -1),
    );
    await writeFile(file, text);
    const plan = piFormat.plan(
      text
        .split('\n')
        .slice(0, -1)
        .map((line, index) => ({ number: index + 1, text: line, value: JSON.parse(line) })),
      { now: new Date(), randomBytes: () => Uint8Array.of(1, 2, 3, 4) },
    );
    assert.equal(plan.kind, 'repair');
    const ids = plan.kind === 'repair' ? plan.calls.map((call) => call.callId) : [];
    assert.equal(ids.length, 3);

    const repaired = await cli(file, '--force');
    assert.equal(repaired.code, 0, JSON.stringify(repaired.outcomes));
    assert.equal((repaired.outcomes[0] as { status: string }).status, 'repaired');
    progress('version-1 session repaired: 3 toolResult entries without ids appended');

    const run = await runPi(home, piArgs('continue', '--session', file), 60_000);
    assert.equal(run.code, 0, run.output);
    assert.deepEqual(server.rejections, []);
    const sent = toolMessages(server.requests.at(-1));
    for (const id of ids) assert.equal(sent.get(id), INTERRUPTED_MESSAGE, id);
    const migrated = (await readFile(file, 'utf8')).split('\n');
    assert.equal(JSON.parse(migrated[0] as string).version, 3, 'pi migrated the file to v3');
    const answers = migrated.filter((line) => line.includes(INTERRUPTED_MESSAGE));
    assert.equal(answers.length, 3);
    for (const line of answers) assert.match(JSON.parse(line).id, /^[0-9a-f]{8}$/);
    progress('pi 0.73.1 migrated it to v3, kept our entries on the path and sent them; no 400');
  });
});
