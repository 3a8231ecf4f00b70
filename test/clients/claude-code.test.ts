import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, utimes } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import {
  CLAUDE_PINNED,
  CLAUDE_RELEASES,
  type ClaudeHome,
  type ClaudeRelease,
  longCommand,
  type ModelServer,
  makeClaudeHome,
  resumeArgs,
  runClaude,
  sessionFile,
  sleepRunsBelow,
  startArgs,
  startClaude,
  startModelServer,
  useModelServer,
} from './claude-code-driver.ts';
import { readFileSafe, repairCli, waitFor } from './support/client-run.ts';
import { alive, killTree, processesMentioning } from './support/process-tree.ts';
import { recordRelease } from './support/releases.ts';
import { assertRefusedWhileAlive } from './support/alive-refusal.ts';
import { TESTED_RELEASES } from '../../src/repair/tested-releases.ts';

/*
 * `llm-agent repair` against the REAL Claude Code (pinned in test/clients/package.json:
 * @anthropic-ai/claude-code), offline: Claude Code talks to a strict scripted Anthropic Messages
 * server on 127.0.0.1 (which refuses a tool_use without its tool_result, or a tool_result
 * without its tool_use, with Anthropic's 400), in a throwaway HOME. The model has Claude Code
 * run a long Bash command (`sleep 60; echo done > marker`) — once alone, once as two tool_use
 * blocks of one assistant message; once the command really runs, Claude Code and every process
 * below it are SIGKILLed. That is the fault: no marker is ever written, and the session file
 * ends with tool_use blocks that have no tool_result (resumed as it is, Claude Code would drop
 * them without a word to the model). The repair appends the results, and `claude --resume`
 * must then send the model every cut-off tool_use followed by our INTERRUPTED_MESSAGE, marked
 * as an error, in a request the strict server accepts.
 *
 * Run by `npm run test:clients`. It fails, never skips, when Claude Code cannot run.
 */

/** How long Claude Code may take to reach the running tool, and to resume. */
const START_TIMEOUT_MS = 90_000;
const RESUME_TIMEOUT_MS = 120_000;

let current: ClaudeRelease = CLAUDE_PINNED;
const progress = (message: string) => console.log(`[claude-code ${current.version}] ${message}`);

const homes: ClaudeHome[] = [];
const servers: ModelServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
  for (const home of homes) await rm(home.root, { recursive: true, force: true });
});

test('every installed release is one repair was tested with, and the other way round', () => {
  assert.deepEqual(
    CLAUDE_RELEASES.map((release) => release.version),
    TESTED_RELEASES['claude-code'],
  );
});

for (const tested of CLAUDE_RELEASES) {
  describe(`Claude Code ${tested.version} cut off mid-tool, repaired, resumed (${tested.command})`, () => {
    test('one Bash call cut off by SIGKILL: the resumed request carries our result', {
      timeout: 300_000,
    }, async () => {
      current = tested;
      await scenario('one', 1);
    });

    const two = tested.version.startsWith('1.')
      ? 'two tool_use blocks of one message cut off by SIGKILL: refused (1.x resumes only the first)'
      : 'two tool_use blocks of one message cut off by SIGKILL: both are answered';
    test(two, {
      timeout: 300_000,
    }, async () => {
      current = tested;
      await scenario('two', 2);
    });
  });
}

const checked = new Map<ClaudeRelease, Promise<void>>();
/** The release runs here: a test fails (never skips) when it does not. */
function clientRuns(release: ClaudeRelease): Promise<void> {
  let check = checked.get(release);
  if (check === undefined) {
    check = (async () => {
      assert.ok(existsSync(release.command), `no Claude Code at ${release.command}`);
      const home = await makeClaudeHome('claude-version-', release);
      homes.push(home);
      const version = await runClaude(home, ['--version'], 60_000);
      assert.equal(version.code, 0, `claude --version failed: ${version.output}`);
      assert.match(
        version.output,
        new RegExp(`^${release.version.replaceAll('.', '\\.')} \\(Claude Code\\)`),
      );
      progress(`client: ${version.output.trim()}`);
    })();
    checked.set(release, check);
  }
  return check;
}

/** Drive Claude Code into `count` long Bash calls of one message, kill it, repair, resume, check. */
async function scenario(name: string, count: number): Promise<void> {
  const release = current;
  await clientRuns(release);
  const home = await makeClaudeHome(`claude-client-${name}-`, release);
  homes.push(home);
  const sessionId = randomUUID();
  const ids = Array.from({ length: count }, (_, index) => `toolu_${name}_${index + 1}`);
  const markers = ids.map((_, index) => join(home.work, `marker-${index + 1}`));
  const server = await startModelServer([
    {
      text: 'Running the commands.',
      calls: ids.map((id, index) => ({
        id,
        name: 'Bash',
        input: {
          command: longCommand(home.work, index + 1),
          description: `Long command ${index + 1}`,
        },
      })),
    },
    { text: 'Resumed: I will check the markers before running anything again.' },
  ]);
  servers.push(server);
  useModelServer(home, server.url);

  // 1. The fault.
  progress(
    `${name}: starting claude -p (${count} long Bash call${count === 1 ? '' : 's'} in one message)`,
  );
  const claude = startClaude(home, startArgs(sessionId, 'Run the long commands.'));
  const pid = claude.child.pid;
  assert.ok(pid !== undefined, `claude did not start: ${claude.output()}`);
  const found: { file: string | null } = { file: null };
  try {
    await waitFor(
      () => {
        found.file ??= sessionFile(home, sessionId);
        const text = (found.file === null ? null : readFileSafe(found.file)) ?? '';
        return (
          existsSync(join(home.work, 'started-1')) &&
          sleepRunsBelow(pid) &&
          ids.every((id) => text.includes(`"id":"${id}"`))
        );
      },
      START_TIMEOUT_MS,
      'the first command to run and every tool_use to be in the session file',
    );
  } catch (error) {
    killTree(pid);
    await claude.exited;
    throw new Error(`${String(error)}\nclaude output:\n${claude.output()}`);
  }
  const session = found.file as string;
  if (release.pinned && name === 'one') {
    // Alive inside its tool (Claude Code keeps no file open and writes nothing meanwhile):
    // refused without any flag, nothing written.
    try {
      const detail = await assertRefusedWhileAlive(session);
      progress(`${name}: alive inside its tool: refused (${detail.slice(-90)})`);
    } catch (error) {
      killTree(pid);
      await claude.exited;
      throw error;
    }
  }
  progress(
    `${name}: a command runs (sleep 60 below pid ${pid}); SIGKILL to claude and every descendant`,
  );
  const killed = killTree(pid);
  const exit = await claude.exited;
  assert.equal(
    exit.signal,
    'SIGKILL',
    `claude ended by ${exit.signal ?? exit.code}, not by the kill`,
  );
  await waitFor(
    () => killed.every((each) => !alive(each)),
    10_000,
    'every killed process to be gone',
  );
  progress(`${name}: killed ${killed.length} processes (${killed.join(', ')}); all gone`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const marker of markers) assert.ok(!existsSync(marker), `${marker} was written`);
  assert.deepEqual(
    processesMentioning(home.work),
    [],
    'a command that could write a marker lives on',
  );

  const original = await readFile(session);
  const lines = original
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const messages = lines.filter((line) => typeof line.uuid === 'string');
  const lastMessage = messages.at(-1) as { type?: unknown; message?: { content?: unknown } };
  assert.equal(lastMessage.type, 'assistant', 'the session ends with the assistant message');
  const uses = messages.flatMap((line) =>
    line.type === 'assistant'
      ? ((line.message as { content: { type: string; id?: string }[] }).content ?? [])
          .filter((block) => block.type === 'tool_use')
          .map((block) => block.id)
      : [],
  );
  assert.deepEqual(uses, ids, 'the session holds the cut-off tool_use blocks');
  assert.ok(!original.toString('utf8').includes('"tool_result"'), 'no tool_result was written');
  const started = ids.filter((_, index) => existsSync(join(home.work, `started-${index + 1}`)));
  progress(
    `${name}: fault proven: no marker, ${session} ends with unanswered ${ids.join(', ')} (${started.length} of them had started; Claude Code runs Bash calls that write one after another)`,
  );

  if (release.version.startsWith('1.') && count > 1) {
    // Claude Code 1.x resumes only the first of several answered calls of one message: refused.
    const refusedOld = await repairCli([session, '--force', '--json']);
    assert.equal(refusedOld.code, 4, `repair: ${refusedOld.stdout}${refusedOld.stderr}`);
    const [shape] = JSON.parse(refusedOld.stdout) as { reason: string; detail: string }[];
    assert.equal(shape?.reason, 'shape');
    assert.match(shape?.detail ?? '', /Claude Code 1\.x sends only the first call/);
    assert.ok((await readFile(session)).equals(original), 'the refusal wrote nothing');
    progress(`${name}: refused (several calls of one message cut off in a 1.x session)`);
    return;
  }
  // 2. The repair: listed by --scan; refused while the file looks live; done with --force.
  // A scan gives a repair's verdict, quiet time included: the file as if left a minute ago.
  const quiet = new Date(Date.now() - 60_000);
  await utimes(session, quiet, quiet);
  const scan = await repairCli(['--scan', join(home.home, '.claude', 'projects'), '--json']);
  assert.equal(scan.code, 3, `repair --scan: ${scan.stdout}${scan.stderr}`);
  const scanned = JSON.parse(scan.stdout) as { sessions: { path: string; status: string }[] };
  assert.deepEqual(
    scanned.sessions.map((outcome) => [outcome.path, outcome.status]),
    [[session, 'planned']],
  );
  // "Just changed", however slow the machine: a time ahead of now always is.
  const ahead = new Date(Date.now() + 60_000);
  await utimes(session, ahead, ahead);
  const refused = await repairCli([session, '--json']);
  assert.equal(refused.code, 7, `repair without --force: ${refused.stdout}${refused.stderr}`);
  const [live] = JSON.parse(refused.stdout) as { status: string; reason: string }[];
  assert.equal(live?.status, 'refused');
  assert.equal(live?.reason, 'live');
  assert.ok((await readFile(session)).equals(original), 'a refused repair wrote nothing');
  progress(`${name}: without --force: refused as live (its time set a minute ahead)`);

  const repaired = await repairCli([session, '--force', '--json']);
  assert.equal(repaired.code, 0, `repair --force: ${repaired.stdout}${repaired.stderr}`);
  const [outcome] = JSON.parse(repaired.stdout) as {
    status: string;
    detection: { format: string; version: string; session?: { id?: string; cwd?: string } };
    calls: { callId: string }[];
    backup: string;
  }[];
  assert.equal(outcome?.status, 'repaired');
  const { session: recorded, ...detection } = outcome.detection;
  assert.deepEqual(detection, { format: 'claude-code', version: release.version, supported: true });
  // What liveness matches a running client against: the session's id and working folder.
  assert.equal(recorded?.id, basename(session, '.jsonl'));
  assert.equal(typeof recorded?.cwd, 'string');
  assert.deepEqual(
    outcome.calls.map((call) => call.callId),
    ids,
  );
  const repairedBytes = await readFile(session);
  assert.ok(
    repairedBytes.subarray(0, original.length).equals(original),
    'the original is a prefix',
  );
  assert.ok((await readFile(outcome.backup)).equals(original), 'the backup is the original');
  const again = await repairCli([session, '--force', '--json']);
  assert.equal(again.code, 0);
  assert.equal((JSON.parse(again.stdout) as { status: string }[])[0]?.status, 'clean');
  assert.ok((await readFile(session)).equals(repairedBytes), 'a second repair wrote nothing');
  progress(`${name}: repaired (${count} result line(s)); a second repair: clean`);

  // 3. The real client resumes the repaired session.
  const before = server.requests.length;
  progress(`${name}: claude --resume ${sessionId} -p continue`);
  const resumed = await runClaude(home, resumeArgs(sessionId), RESUME_TIMEOUT_MS);
  assert.equal(resumed.code, 0, `claude --resume failed:\n${resumed.output}`);
  assert.match(resumed.output, /Resumed: I will check the markers/);
  assert.equal(server.requests.length, before + 1, 'the resume sent one request');
  assertResumedRequest(server, ids);
  assert.equal(server.remaining(), 0, 'the script ran to its end');
  for (const marker of markers) assert.ok(!existsSync(marker), `${marker} was written on resume`);
  recordRelease('claude-code', release.version, `repaired-resumed-${name}`, session);
  progress(
    `${name}: resumed; the request carried INTERRUPTED_MESSAGE (is_error) for ${ids.join(', ')}`,
  );
}

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: unknown;
}

/** The resumed request: each cut-off tool_use, then our result first in the next message; no 400. */
function assertResumedRequest(server: ModelServer, ids: readonly string[]): void {
  assert.deepEqual(server.rejections, [], 'the strict server refused a request');
  const request = server.requests.at(-1) as { messages?: { role: string; content: unknown }[] };
  const messages = request.messages ?? [];
  const blocks = (index: number): Block[] => {
    const content = messages[index]?.content;
    return Array.isArray(content) ? (content as Block[]) : [];
  };
  const summary = JSON.stringify(
    messages.map((message, index) => [
      message.role,
      blocks(index).map((block) => `${block.type}:${block.id ?? block.tool_use_id ?? ''}`),
    ]),
  );
  // Each cut-off tool_use is sent, and the next message opens with our results for the calls of
  // its message (2.x sends the calls of one streamed message as one; 1.0.98 one per line).
  for (let index = 0; index < messages.length; index += 1) {
    const uses = blocks(index)
      .filter((block) => block.type === 'tool_use' && ids.includes(block.id ?? ''))
      .map((block) => block.id);
    if (messages[index]?.role !== 'assistant' || uses.length === 0) continue;
    assert.equal(messages[index + 1]?.role, 'user', summary);
    assert.deepEqual(
      blocks(index + 1)
        .slice(0, uses.length)
        .map((block) => [block.type, block.tool_use_id, block.content, block.is_error]),
      uses.map((id) => ['tool_result', id, INTERRUPTED_MESSAGE, true]),
      `the message after ${uses.join(', ')} opens with our results: ${summary}`,
    );
  }
  for (const id of ids) {
    assert.ok(
      messages.some(
        (message, index) =>
          message.role === 'assistant' && blocks(index).some((block) => block.id === id),
      ),
      `the resumed request lacks the tool_use ${id}: ${summary}`,
    );
  }
  const all = JSON.stringify(messages);
  for (const id of ids) {
    assert.equal(all.split(`"tool_use_id":"${id}"`).length - 1, 1, `${id}: exactly one result`);
  }
}
