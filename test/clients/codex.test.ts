import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { startResponsesServer } from '../../src/testing/index.ts';
import type { ResponsesServer } from '../../src/testing/responses-server.ts';
import { repairCli, run, startDetached, waitFor } from './support/client-run.ts';
import { alive, killTree, processTable, processTree } from './support/process-tree.ts';
import { codexConfigToml } from './support/codex-config.ts';
import { assertRefusedWhileAlive } from './support/alive-refusal.ts';
import { type InstalledRelease, installedReleases, recordRelease } from './support/releases.ts';
import { TESTED_RELEASES } from '../../src/repair/tested-releases.ts';

/*
 * `llm-agent repair` against the REAL Codex CLI (@openai/codex, pinned in test/clients/package.json), offline:
 * Codex talks to a strict scripted OpenAI Responses server on 127.0.0.1 (which refuses a call
 * without its output, or an output without its call, with OpenAI's 400), in a throwaway HOME and
 * CODEX_HOME. The model makes Codex run a long shell command (`sleep 60; echo done > marker`);
 * once the command really runs, Codex and every process it started are SIGKILLed. That is the
 * fault: the marker is never written, and the rollout ends with a call that has no output. The
 * repair appends the outputs (and closes the turn), and `codex exec resume` must then send the
 * model every cut-off call with our INTERRUPTED_MESSAGE as its output — where Codex today would
 * send "aborted" — in a request the strict server accepts.
 *
 * Run by `npm run test:clients`. It fails, never skips, when Codex cannot run.
 */

/** One installed Codex release and its entry point (run with this Node). */
interface CodexRelease extends InstalledRelease {
  js: string;
}

/** Every installed Codex release, oldest first: the pinned one and npm aliases (`codex-0-146`). */
const CODEX_RELEASES: readonly CodexRelease[] = installedReleases(
  join('@openai', 'codex'),
  'codex',
).map((release) => ({ ...release, js: join(release.folder, 'bin', 'codex.js') }));
/** How long Codex may take to reach the running tool, and to resume. */
const START_TIMEOUT_MS = 60_000;
const RESUME_TIMEOUT_MS = 90_000;

let current = CODEX_RELEASES.find((release) => release.pinned) as CodexRelease;
const progress = (message: string) => console.log(`[codex ${current.version}] ${message}`);

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-codex-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

test('every installed release is one repair was tested with, and the other way round', () => {
  assert.deepEqual(
    CODEX_RELEASES.map((release) => release.version),
    TESTED_RELEASES.codex,
  );
});

for (const tested of CODEX_RELEASES) {
  describe(`Codex ${tested.version} cut off mid-tool, repaired, resumed (${tested.js})`, () => {
    test('one shell call cut off by SIGKILL: the resumed request carries our output', {
      timeout: 240_000,
    }, async () => {
      current = tested;
      await scenario('one', 1);
    });

    test('two parallel shell calls cut off by SIGKILL: both are answered', {
      timeout: 240_000,
    }, async () => {
      current = tested;
      await scenario('two', 2);
    });
  });
}

const checked = new Map<CodexRelease, Promise<void>>();
/** The release runs here: a test fails (never skips) when it does not. */
function clientRuns(release: CodexRelease): Promise<void> {
  let check = checked.get(release);
  if (check === undefined) {
    check = (async () => {
      const version = await run(process.execPath, [release.js, '--version'], {
        env: { PATH: process.env.PATH ?? '', HOME: folder },
        timeoutMs: 30_000,
      });
      assert.equal(version.code, 0, `codex --version failed: ${version.stderr}`);
      assert.match(
        version.stdout,
        new RegExp(`codex-cli ${release.version.replaceAll('.', '\\.')}`),
      );
      progress(`client: ${version.stdout.trim()}`);
    })();
    checked.set(release, check);
  }
  return check;
}

/** Drive Codex into `count` parallel long shell calls, kill it, repair, resume, check. */
async function scenario(name: string, count: number): Promise<void> {
  const release = current;
  await clientRuns(release);
  const base = join(folder, `${release.version}-${name}`);
  const home = join(base, 'home');
  const codexHome = join(base, 'codex-home');
  const work = join(base, 'work');
  await Promise.all([home, codexHome, work].map((path) => mkdir(path, { recursive: true })));
  const markers = Array.from({ length: count }, (_, index) => join(work, `marker-${index + 1}`));
  const calls = markers.map((marker, index) => ({
    id: `call_${name}_${index + 1}`,
    name: 'exec_command',
    // yield_time_ms: exec_command answers a still-running command after this long (default
    // 10 s, at most 30 s); the kill comes well before.
    input: { cmd: `sleep 60; echo done > ${marker}`, yield_time_ms: 30_000 },
  }));
  const server = await startResponsesServer([
    { calls },
    { text: 'Resumed: I will check the markers before running anything again.' },
  ]);
  try {
    await writeFile(join(codexHome, 'config.toml'), codexConfigToml(server.url));
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      CODEX_HOME: codexHome,
      FAKE_MODEL_KEY: 'test-key',
      RUST_LOG: 'warn',
    };

    // 1. The fault.
    progress(`${name}: starting codex exec (${count} long shell call${count === 1 ? '' : 's'})`);
    const codex = startDetached(
      process.execPath,
      [release.js, 'exec', '--skip-git-repo-check', 'Run the commands.'],
      { cwd: work, env },
    );
    const pid = codex.child.pid as number;
    let rollout: string;
    try {
      rollout = await waitFor(
        async () => {
          const file = await findRollout(codexHome);
          if (file === null) return null;
          const running = commandsRunning(pid, markers);
          return running === count ? file : null;
        },
        START_TIMEOUT_MS,
        `the ${count} command(s) to run`,
      );
    } catch (error) {
      killTree(pid);
      throw new Error(`${String(error)}\ncodex stderr:\n${codex.stderr()}`);
    }
    if (release.pinned && name === 'one') {
      // Alive inside its tool: refused without any flag, nothing written.
      try {
        const detail = await assertRefusedWhileAlive(rollout);
        progress(`${name}: alive inside its tool: refused (${detail.slice(-90)})`);
      } catch (error) {
        killTree(pid);
        await codex.exited;
        throw error;
      }
    }
    progress(`${name}: ${count} command(s) running; SIGKILL to codex and every descendant`);
    const killed = killTree(pid);
    await codex.exited;
    await waitFor(
      () => killed.every((each) => !alive(each)),
      10_000,
      'every killed process to be gone',
    );
    progress(`${name}: killed ${killed.length} processes (${killed.join(', ')}); all gone`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const marker of markers) assert.ok(!existsSync(marker), `${marker} was written`);
    assert.equal(commandsRunning(null, markers), 0, 'a command that could write a marker lives on');

    const original = await readFile(rollout);
    const items = rolloutItems(original.toString('utf8'));
    const ids = calls.map((call) => call.id);
    const responseItems = items.filter((item) => item.type === 'response_item');
    assert.deepEqual(
      responseItems.slice(-count).map((item) => [item.payload.type, item.payload.call_id]),
      ids.map((id) => ['function_call', id]),
      'the rollout ends (in what the model is sent) with the cut-off calls',
    );
    assert.ok(
      !items.some((item) => ids.includes(String(item.payload.call_id)) && isOutput(item)),
      'no output was written for a cut-off call',
    );
    progress(`${name}: fault proven: no marker, ${rollout} ends with unanswered ${ids.join(', ')}`);

    // 2. The repair: refused while the file looks live, done with --force (the client is dead).
    // "Just changed", however slow the machine: a time ahead of now always is.
    const ahead = new Date(Date.now() + 60_000);
    await utimes(rollout, ahead, ahead);
    const refused = await repair([rollout, '--json']);
    assert.equal(refused.code, 7, `repair without --force: ${refused.stdout}${refused.stderr}`);
    const [live] = JSON.parse(refused.stdout) as { status: string; reason: string }[];
    assert.equal(live?.status, 'refused');
    assert.equal(live?.reason, 'live');
    assert.ok((await readFile(rollout)).equals(original), 'a refused repair wrote nothing');
    progress(`${name}: without --force: refused as live (its time set a minute ahead)`);

    const repaired = await repair([rollout, '--force', '--json']);
    assert.equal(repaired.code, 0, `repair --force: ${repaired.stdout}${repaired.stderr}`);
    const [outcome] = JSON.parse(repaired.stdout) as {
      status: string;
      calls: { callId: string }[];
      backup: string;
    }[];
    assert.equal(outcome?.status, 'repaired');
    assert.deepEqual(
      outcome.calls.map((call) => call.callId),
      ids,
    );
    const after = await readFile(rollout);
    assert.ok(after.subarray(0, original.length).equals(original), 'the original is a prefix');
    assert.ok((await readFile(outcome.backup)).equals(original), 'the backup is the original');
    const again = await repair([rollout, '--force', '--json']);
    assert.equal(again.code, 0);
    assert.equal((JSON.parse(again.stdout) as { status: string }[])[0]?.status, 'clean');
    assert.ok((await readFile(rollout)).equals(after), 'a second repair wrote nothing');
    progress(`${name}: repaired (${count} output(s) + turn_aborted); a second repair: clean`);

    // 3. The real client resumes the repaired session.
    const sessionId = items[0]?.payload.id;
    assert.equal(typeof sessionId, 'string');
    const before = server.requests.length;
    progress(`${name}: codex exec resume ${String(sessionId)} continue`);
    const resumed = await run(
      process.execPath,
      [release.js, 'exec', '--skip-git-repo-check', 'resume', String(sessionId), 'continue'],
      { cwd: work, env, timeoutMs: RESUME_TIMEOUT_MS },
    );
    assert.equal(resumed.code, 0, `codex exec resume failed:\n${resumed.stderr}`);
    assert.equal(server.requests.length, before + 1, 'the resume sent one request');
    assertResumedRequest(server, ids);
    // Codex read every appended line (it warns about a line it cannot read or an ordinal gap).
    assert.doesNotMatch(resumed.stderr, /skipping (unknown rollout line|missing rollout ordinal)/);
    assert.equal(server.remaining(), 0, 'the script ran to its end');
    recordRelease('codex', release.version, `repaired-resumed-${name}`, rollout);
    progress(`${name}: resumed; the request carried INTERRUPTED_MESSAGE for ${ids.join(', ')}`);
  } finally {
    await server.close();
  }
}

/** The resumed request: every cut-off call, then its output with our text; the strict server said yes. */
function assertResumedRequest(server: ResponsesServer, ids: readonly string[]): void {
  assert.deepEqual(server.rejections, [], 'the strict server refused a request');
  const request = server.requests.at(-1) as { input?: Record<string, unknown>[] };
  const input = request.input ?? [];
  for (const id of ids) {
    const call = input.findIndex((item) => item.type === 'function_call' && item.call_id === id);
    assert.ok(call >= 0, `the resumed request lacks the call ${id}`);
    const outputs = input.filter(
      (item) => item.type === 'function_call_output' && item.call_id === id,
    );
    assert.equal(outputs.length, 1, `${id}: one output`);
    assert.equal(outputs[0]?.output, INTERRUPTED_MESSAGE, `${id}: our text, not "aborted"`);
    assert.ok(
      input.indexOf(outputs[0] as Record<string, unknown>) > call,
      `${id}: output after call`,
    );
  }
  const texts = input.flatMap((item) =>
    item.type === 'message' && item.role === 'user' && Array.isArray(item.content)
      ? (item.content as { text?: unknown }[]).map((part) => String(part.text))
      : [],
  );
  const marker = texts.find((text) => text.startsWith('<turn_aborted>'));
  assert.ok(marker !== undefined, 'the turn_aborted marker was sent');
  assert.match(marker, /the Codex process stopped/);
  assert.ok(!JSON.stringify(input).includes('"output":"aborted"'), 'Codex filled in "aborted"');
}

interface RolloutItem {
  type: string;
  payload: Record<string, unknown>;
}

function rolloutItems(text: string): RolloutItem[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RolloutItem);
}

function isOutput(item: RolloutItem): boolean {
  return item.type === 'response_item' && String(item.payload.type).endsWith('_output');
}

/** The rollout file under CODEX_HOME/sessions, once Codex has written its calls. */
async function findRollout(codexHome: string): Promise<string | null> {
  const sessions = join(codexHome, 'sessions');
  if (!existsSync(sessions)) return null;
  const entries = await readdir(sessions, { recursive: true });
  const files = entries.filter((entry) => /rollout-.*\.jsonl$/.test(entry));
  return files.length === 1 ? join(sessions, files[0] as string) : null;
}

/**
 * How many live processes would write one of `markers`: below `root`, the shells Codex started
 * whose `sleep` runs; anywhere (`root` null), any process whose command line writes one.
 */
function commandsRunning(root: number | null, markers: readonly string[]): number {
  const table = processTable();
  const pids = root === null ? [...table.keys()] : processTree(root).slice(1);
  return pids.filter((pid) => {
    const entry = table.get(pid);
    if (entry === undefined || entry.state === 'Z') return false;
    if (!markers.some((marker) => entry.command.includes(`> ${marker}`))) return false;
    if (root === null) return true;
    // Below Codex: the shell it started, once that shell is in its `sleep`.
    return [...table.values()].some(
      (child) =>
        child.parent === pid && child.state !== 'Z' && child.command.startsWith('sleep 60'),
    );
  }).length;
}

/** `llm-agent repair …` as a user runs it, with HOME in this test's folder. */
function repair(args: readonly string[]) {
  return repairCli(args, { home: folder, timeoutMs: 30_000 });
}
