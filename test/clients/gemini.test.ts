import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { cp, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { GEMINI_INTERRUPTED_TURN } from '../../src/repair/gemini-format.ts';
import { TESTED_RELEASES } from '../../src/repair/tested-releases.ts';
import {
  GEMINI_RELEASES,
  GEMINI_VERSION,
  type GeminiHome,
  type GeminiRelease,
  geminiArgs,
  makeGeminiHome,
  runGemini,
  sessionFiles,
  startGemini,
} from './gemini-driver.ts';
import { assertDryRunAndScanLive } from './support/alive-refusal.ts';
import { repairCli, waitFor } from './support/client-run.ts';
import { type GeminiServer, startGeminiServer } from './support/gemini-server.ts';
import { killTree, processesMentioning, processTree } from './support/process-tree.ts';

/*
 * The real Gemini CLI (pinned in test/clients/package.json), offline against a strict scripted
 * Gemini API on 127.0.0.1: the model has it run long shell commands (`sleep 60; echo done >
 * marker`), and Gemini CLI and every process below it are SIGKILLed while they run. Gemini CLI
 * records a tool call only when it finishes, so the session is left with an empty model turn
 * and no trace of the call. `llm-agent repair` re-appends that turn (same id) saying what is
 * known; Gemini CLI, resuming the session, must send it as the model's turn (unrepaired, the
 * turn is dropped and the model never hears that it ran anything), and the server, which
 * refuses a request that breaks Gemini's function-call pairing with Gemini's own 400, must
 * accept the request. Nothing is skipped.
 */

let current: GeminiRelease = GEMINI_RELEASES.at(-1) as GeminiRelease;
const progress = (text: string) => console.log(`[gemini ${current.version}] ${text}`);

const homes: GeminiHome[] = [];
const servers: GeminiServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
  for (const home of homes) await rm(home.root, { recursive: true, force: true });
});

interface Content {
  role: string;
  parts: { text?: string; functionCall?: unknown; functionResponse?: unknown }[];
}

/** The text of every part of a turn request's contents, one string per content. */
function texts(request: Record<string, unknown> | undefined): { role: string; text: string }[] {
  return ((request?.contents ?? []) as Content[]).map((content) => ({
    role: content.role,
    text: content.parts.map((part) => part.text ?? JSON.stringify(part)).join(''),
  }));
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

/** Start Gemini CLI on `count` long commands and wait until the first has started. */
async function startLongCommands(count: number, extra: { text: string }[]) {
  const calls = Array.from({ length: count }, (_, index) => index + 1).map((n) => ({
    id: `call_long_${n}`,
    name: 'run_shell_command',
    input: { command: '', description: `long command ${n}` },
  }));
  const server = await startGeminiServer([{ calls }, ...extra]);
  servers.push(server);
  const home = await makeGeminiHome(server.url);
  home.cli = current.cli;
  homes.push(home);
  const marker = (n: number) => join(home.work, `marker-${n}`);
  const started = (n: number) => join(home.work, `started-${n}`);
  calls.forEach((call, index) => {
    call.input.command = `echo started > ${started(index + 1)}; sleep 60; echo done > ${marker(index + 1)}`;
  });
  const gemini = startGemini(home, geminiArgs('Run the long commands.'));
  const pid = gemini.child.pid as number;
  try {
    await waitFor(
      () => existsSync(started(1)),
      90_000,
      `the first command to start (gemini output: ${gemini.output()})`,
    );
  } catch (error) {
    killTree(pid);
    throw error;
  }
  return { server, home, gemini, pid, calls, marker, started };
}

/** Kill Gemini CLI with its tree and prove it: nothing of the session's commands left. */
async function killGemini(run: Awaited<ReturnType<typeof startLongCommands>>): Promise<void> {
  const tree = processTree(run.pid);
  progress(`killing gemini and its ${tree.length - 1} descendant(s) with SIGKILL`);
  killTree(run.pid);
  const exit = await Promise.race([
    run.gemini.exited,
    new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 10_000)),
  ]);
  assert.notEqual(exit, 'alive', 'gemini survived SIGKILL');
  await waitFor(
    () => processesMentioning(run.home.work).length === 0,
    10_000,
    'every command to be gone',
  );
}

/**
 * Gemini CLI runs `count` long commands (the model asks for them in one turn), is killed with
 * its whole tree, and the session is repaired and resumed. With `control`, a copy of the broken
 * home is resumed first, unrepaired, to show what Gemini CLI sends today.
 */
async function crashRepairResume(count: number, control: boolean): Promise<void> {
  progress(
    `starting gemini: the model calls run_shell_command ${count}× (sleep 60; echo done > marker)`,
  );
  const run = await startLongCommands(count, [
    ...(control ? [{ text: 'Resumed without repair.' }] : []),
    { text: 'I will check the markers before doing anything else.' },
  ]);
  await killGemini(run);
  const { home, server } = run;

  // The fault: no command finished, and the session ends with an empty model turn.
  for (let n = 1; n <= count; n += 1)
    assert.equal(existsSync(run.marker(n)), false, `marker-${n} written`);
  const [file, ...others] = sessionFiles(home);
  assert.ok(file !== undefined && others.length === 0, 'gemini wrote one session file');
  const original = await readFile(file);
  const records = original
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  const sessionId = records[0].sessionId as string;
  const turn = records.filter((record) => typeof record.id === 'string').at(-1);
  assert.equal(turn.type, 'gemini');
  assert.equal(turn.content, '');
  assert.equal(turn.toolCalls, undefined, 'the cut-off call is not in the file');
  assert.doesNotMatch(
    original.toString('utf8'),
    /sleep 60/,
    'the command is nowhere in the session',
  );
  progress(`killed; the session ends with an empty model turn ${turn.id}, the call unrecorded`);

  if (control) {
    const copy = await makeGeminiHome(server.url, 'gemini-control-');
    copy.cli = current.cli;
    homes.push(copy);
    await cp(join(home.home, '.gemini'), join(copy.home, '.gemini'), { recursive: true });
    copy.work = home.work;
    const resumed = await runGemini(copy, geminiArgs('continue', sessionId), 120_000);
    assert.equal(resumed.code, 0, resumed.output);
    const sent = texts(server.turns.at(-1));
    assert.equal(
      sent.filter((content) => content.role === 'model').length,
      0,
      'unrepaired, the empty turn is dropped',
    );
    assert.doesNotMatch(JSON.stringify(server.turns.at(-1)), /interrupted|sleep 60/);
    progress('control: resumed unrepaired, the model is not told that a command ran');
  }

  // Gemini CLI is dead (proved above), so --force is right here.
  const repaired = await cli(file, '--force');
  assert.equal(repaired.code, 0, JSON.stringify(repaired.outcomes));
  const outcome = repaired.outcomes[0] as { status: string; backup: string; detection: unknown };
  assert.equal(outcome.status, 'repaired');
  assert.deepEqual(outcome.detection, {
    format: 'gemini-cli',
    version: 'chat jsonl',
    supported: true,
  });
  const repairedBytes = await readFile(file);
  assert.ok(repairedBytes.subarray(0, original.length).equals(original), 'append-only');
  assert.ok((await readFile(outcome.backup)).equals(original), 'byte-exact backup');
  const appended = repairedBytes.subarray(original.length).toString('utf8').trimEnd().split('\n');
  assert.equal(appended.length, 1);
  assert.deepEqual(JSON.parse(appended[0] as string), {
    ...turn,
    content: GEMINI_INTERRUPTED_TURN,
  });
  progress('repaired: the empty turn appended again, same id, with what is known');

  const before = server.turns.length;
  const resumed = await runGemini(home, geminiArgs('continue', sessionId), 120_000);
  assert.equal(resumed.code, 0, resumed.output);
  assert.deepEqual(server.rejections, [], 'the strict server refused a request');
  assert.equal(server.turns.length, before + 1);
  assert.equal(server.remaining(), 0);
  const sent = texts(server.turns.at(-1));
  const models = sent.filter((content) => content.role === 'model');
  assert.deepEqual(
    models.map((content) => content.text),
    [GEMINI_INTERRUPTED_TURN],
  );
  const at = sent.findIndex((content) => content.role === 'model');
  assert.match(
    sent[at - 1]?.text ?? '',
    /Run the long commands\./,
    'it answers the prompt that started it',
  );
  assert.match(sent[at + 1]?.text ?? '', /continue/, 'the resumed prompt comes after it');
  progress('resumed: Gemini CLI sent our text as the cut-off model turn; no 400');

  const again = await cli(file);
  assert.equal(again.code, 0, JSON.stringify(again.outcomes));
  assert.equal(again.outcomes[0]?.status, 'clean');
  for (let n = 1; n <= count; n += 1)
    assert.equal(existsSync(run.marker(n)), false, 'the killed command never ran again');
  progress('a second repair is clean; no marker was ever written');
}

for (const tested of GEMINI_RELEASES) {
  describe(`Gemini CLI ${tested.version} killed mid-tool, repaired, resumed (${tested.cli})`, () => {
    test('one shell call cut off', { timeout: 400_000 }, async () => {
      current = tested;
      await crashRepairResume(1, true);
    });

    test('two shell calls in one turn cut off', { timeout: 300_000 }, async () => {
      current = tested;
      await crashRepairResume(2, false);
    });
  });
}

describe(`Gemini CLI ${GEMINI_VERSION}, the pinned release, alive`, () => {
  test('pinned version, and older releases of the same session format beside it', () => {
    assert.equal(GEMINI_VERSION, '0.61.0');
    assert.deepEqual(
      GEMINI_RELEASES.map((release) => release.version),
      [...TESTED_RELEASES['gemini-cli']],
    );
  });

  test('alive inside a long tool: repair refuses and writes nothing', {
    timeout: 200_000,
  }, async () => {
    const run = await startLongCommands(1, []);
    try {
      const [file] = sessionFiles(run.home);
      assert.ok(file !== undefined);
      // Past the quiet window: only knowing that Gemini CLI still runs can refuse now.
      await waitFor(() => Date.now() - statSync(file).mtimeMs > 6_000, 30_000, 'six quiet seconds');
      const before = await readFile(file);
      const live = await cli(file);
      assert.equal(live.code, 7, JSON.stringify(live.outcomes));
      assert.equal(live.outcomes[0]?.reason, 'live');
      await assertDryRunAndScanLive(file);
      assert.ok((await readFile(file)).equals(before), 'the refusal wrote nothing');
      assert.deepEqual(
        readdirSync(dirname(file)).filter((name) => name.includes('.bak-')),
        [],
      );
      progress(`alive inside its tool: refused (${String(live.outcomes[0]?.detail).slice(-80)})`);
    } finally {
      await killGemini(run);
    }
  });
});
