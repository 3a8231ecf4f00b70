import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ProcessEntry, ProcessTable } from '../../src/repair/process-table.ts';
import { readProcessTable } from '../../src/repair/process-table.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { sessionLiveness } from '../../src/repair/session-liveness.ts';
import { clientOf, type OwnedSession, sessionOwners } from '../../src/repair/session-owners.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';

/*
 * Liveness that does not depend on the file being open: Claude Code and pi keep no session file
 * open and write nothing while a tool runs, so a quiet, closed file can still be in a running
 * client's hands. The matching is pure (a process table in, owners out); the table is read from
 * /proc by a thin shell, proven here with real processes named like the clients.
 */

const FOREIGN = fileURLToPath(new URL('../fixtures/foreign/', import.meta.url));
const OLD = new Date(Date.now() - 60_000);

function entry(fields: Partial<ProcessEntry>): ProcessEntry {
  return {
    pid: 100,
    command: 'node',
    executable: '/usr/bin/node',
    argv: [],
    cwd: '/',
    descriptors: [],
    ...fields,
  };
}

const SESSION: OwnedSession = {
  path: '/h/.pi/agent/sessions/--work-app--/s.jsonl',
  format: 'pi',
  id: '01a23f58-655a-71be-bde7-b16d15a58a26',
  cwds: ['/work/app'],
  folder: '/h/.pi/agent/sessions/--work-app--',
  file: { dev: 1, ino: 77 },
};

describe('which process is a client (pure)', () => {
  test('by native name, npm bin, or the node script behind it', () => {
    const cases: [Partial<ProcessEntry>, string | null][] = [
      [{ command: 'claude', executable: '/usr/local/bin/claude', argv: ['claude'] }, 'claude'],
      [
        {
          command: 'claude.exe',
          executable: '/p/node_modules/@anthropic-ai/claude-code/bin/claude.exe',
          argv: ['/p/node_modules/.bin/claude', '-p', 'hi'],
        },
        'claude',
      ],
      [{ argv: ['node', '/p/node_modules/.bin/codex', 'resume'] }, 'codex'],
      [{ command: 'codex', executable: '/x/vendor/codex/codex', argv: ['/x/codex'] }, 'codex'],
      [{ argv: ['node', '/p/node_modules/@mariozechner/pi-coding-agent/dist/cli.js'] }, 'pi'],
      [{ argv: ['/usr/bin/node', '--no-warnings', '/home/me/.local/bin/pi', '-c'] }, 'pi'],
      [{ argv: ['bun', '/x/node_modules/opencode-ai/bin/opencode', 'run'] }, 'opencode'],
      [{ argv: ['node', '/x/node_modules/@google/gemini-cli/dist/index.js'] }, 'gemini'],
      // Not clients: an editor with a client's name among its arguments, node running a test.
      [{ command: 'vim', executable: '/usr/bin/vim', argv: ['vim', 'pi', 'claude'] }, null],
      [{ argv: ['node', '--test', 'test/pi.test.ts'] }, null],
      [{ command: 'bash', executable: '/bin/bash', argv: ['bash', '-c', 'claude'] }, null],
    ];
    for (const [fields, client] of cases) {
      assert.equal(clientOf(entry(fields))?.client ?? null, client, JSON.stringify(fields));
    }
  });
});

describe('which process owns a session (pure)', () => {
  const pi = (fields: Partial<ProcessEntry>) =>
    entry({ argv: ['node', '/x/node_modules/.bin/pi'], ...fields });
  const table = (...processes: ProcessEntry[]): ProcessTable => ({ processes, complete: true });

  test('its client by the id on its command line, its working folder, or a descriptor in the folder', () => {
    const owners = sessionOwners(
      table(
        pi({ pid: 1, argv: ['node', '/x/bin/pi', '--session', `${SESSION.id}`] }),
        pi({ pid: 2, cwd: '/work/app' }),
        pi({ pid: 3, descriptors: [{ target: `${SESSION.folder}/other.jsonl`, dev: 1, ino: 5 }] }),
        pi({ pid: 4, cwd: '/work/other' }), // another project: not this session's
      ),
      SESSION,
    );
    assert.deepEqual(owners, [
      {
        pid: 1,
        program: 'pi',
        matched: `its command line names the session's id (${SESSION.id})`,
      },
      { pid: 2, program: 'pi', matched: "its working folder is the session's (/work/app)" },
      {
        pid: 3,
        program: 'pi',
        matched: `it has ${SESSION.folder}/other.jsonl open, in the session's folder`,
      },
    ]);
  });

  test("another client's process in the session's folder is not its owner; any process with the file open is", () => {
    const owners = sessionOwners(
      table(
        entry({ pid: 5, command: 'claude', argv: ['claude'], cwd: '/work/app' }),
        entry({
          pid: 6,
          command: 'tail',
          argv: ['tail', '-f', 'link-to-session'],
          descriptors: [{ target: '/elsewhere/link', dev: 1, ino: 77 }],
        }),
      ),
      SESSION,
    );
    assert.deepEqual(owners, [
      { pid: 6, program: 'tail', matched: 'it has the session file open' },
    ]);
  });

  test('a format no client entry knows (a new one) is matched against every client', () => {
    const owners = sessionOwners(
      table(entry({ pid: 7, command: 'claude', argv: ['claude'], cwd: '/work/app' })),
      { ...SESSION, format: 'some-new-format' },
    );
    assert.deepEqual(
      owners.map((owner) => owner.pid),
      [7],
    );
  });

  test('a short id is not looked for on command lines (it would match by chance)', () => {
    const owners = sessionOwners(table(pi({ pid: 8, argv: ['node', '/x/bin/pi', 'abc'] })), {
      ...SESSION,
      id: 'abc',
      cwds: [],
    });
    assert.deepEqual(owners, []);
  });
});

/*
 * Real processes: a fake client — a node script named like the client's bin — alive while the
 * repair is tried, then killed.
 */
describe('a running client, found in /proc', () => {
  let folder: string;
  const children: ChildProcess[] = [];
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'llm-agent-repair-live-'));
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  });

  /** A node script at `bin/NAME` that idles, started with `args` in `cwd`. */
  async function fakeClient(name: string, cwd: string, args: string[] = []): Promise<ChildProcess> {
    const script = join(folder, 'bin', name);
    await mkdir(dirname(script), { recursive: true });
    await writeFile(script, 'setInterval(() => {}, 1000);\n');
    const child = spawn(process.execPath, [script, ...args], { cwd, stdio: 'ignore' });
    children.push(child);
    // The fault is real: the process is in the table, as the client, before the repair looks.
    for (let tries = 0; ; tries += 1) {
      const seen = (await readProcessTable()).processes.find((one) => one.pid === child.pid);
      if (seen !== undefined && clientOf(seen)?.client === name && seen.cwd === cwd) break;
      assert.ok(tries < 200, `the fake ${name} never showed in /proc`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return child;
  }

  async function killed(child: ChildProcess): Promise<void> {
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  const digest = async (path: string) =>
    createHash('sha256')
      .update(await readFile(path))
      .digest('hex');

  test("pi alive in the session's folder: refused by repair, --dry-run and --scan, not a byte written; killed: repaired", async () => {
    const work = join(folder, 'work');
    await mkdir(work, { recursive: true });
    const sessions = join(folder, 'home/.pi/agent/sessions/--work--');
    await mkdir(sessions, { recursive: true });
    const path = join(sessions, 'session.jsonl');
    const text = await readFile(join(FOREIGN, 'pi/crash-two-calls.v3.jsonl'), 'utf8');
    await writeFile(path, text.replace('/tmp/pi-record-Ow8Qon/work', work));
    await utimes(path, OLD, OLD); // quiet for a minute: the old checks pass it
    const before = await digest(path);
    const entries = await readdir(sessions);

    const client = await fakeClient('pi', work);
    const refused = await runCli(['repair', path], { cwd: folder });
    assert.equal(refused.code, 7, refused.stdout + refused.stderr);
    assert.match(
      refused.stdout,
      new RegExp(
        `not repaired \\(live\\): .*its client may be running: pid ${client.pid} \\(pi\\): its working folder is the session's \\(${work}\\)\\. First stop that client \\(or wait for its tool to finish\\) and try again; --force repairs it anyway`,
      ),
    );
    const dry = await runCli(['repair', path, '--dry-run', '--json'], { cwd: folder });
    assert.equal(dry.code, 7, dry.stdout);
    assert.equal((JSON.parse(dry.stdout) as { reason: string }[])[0]?.reason, 'live');
    const scan = await runCli(['repair', '--scan', '--json', sessions], { cwd: folder });
    const scanned = JSON.parse(scan.stdout) as { sessions: { status: string; reason: string }[] };
    assert.deepEqual(
      scanned.sessions.map((session) => [session.status, session.reason]),
      [['refused', 'live']],
    );
    assert.equal(await digest(path), before, 'not one byte written');
    assert.deepEqual(await readdir(sessions), entries, 'no backup, no sidecar');

    await killed(client);
    const repaired = await runCli(['repair', path, '--json'], { cwd: folder });
    assert.equal(repaired.code, 0, repaired.stdout + repaired.stderr);
    assert.equal((JSON.parse(repaired.stdout) as { status: string }[])[0]?.status, 'repaired');
  });

  test('Claude Code named by its session id on the command line, elsewhere: refused; --force says what it risks', async () => {
    const text = await readFile(join(FOREIGN, 'claude-code/killed-two-calls.jsonl'), 'utf8');
    const path = join(folder, 'claude.jsonl');
    await writeFile(path, text);
    await utimes(path, OLD, OLD);
    const id = '7c0d3c2e-8a11-4b5e-9f00-000000000002';
    assert.ok(text.includes(`"sessionId":"${id}"`));
    const client = await fakeClient('claude', tmpdir(), ['--resume', id]);
    const refused = await repairSession(path);
    assert.ok(refused.status === 'refused');
    assert.equal(refused.reason, 'live');
    assert.match(
      refused.detail,
      new RegExp(
        `pid ${client.pid} \\(claude\\): its command line names the session's id \\(${id}\\)`,
      ),
    );
    assert.equal(await readFile(path, 'utf8'), text);
    const forced = await repairSession(path, { force: true });
    assert.ok(forced.status === 'repaired');
    assert.match(forced.forced ?? '', /the real result may be written after ours/);
    await killed(client);
  });

  test("Codex holding a file in the session's folder: live by that descriptor (the function the client tests call)", async () => {
    const sessions = join(folder, 'codex-sessions');
    await mkdir(sessions, { recursive: true });
    const held = join(sessions, 'other-rollout.jsonl');
    await writeFile(held, '');
    const path = join(sessions, 'rollout.jsonl');
    await writeFile(path, '{}\n');
    await utimes(path, OLD, OLD);
    const script = join(folder, 'bin', 'codex');
    await mkdir(dirname(script), { recursive: true });
    await writeFile(
      script,
      `require('fs').openSync(${JSON.stringify(held)}, 'a'); setInterval(() => {}, 1000);\n`,
    );
    const child = spawn(process.execPath, [script], { cwd: tmpdir(), stdio: 'ignore' });
    children.push(child);
    let verdict = await sessionLiveness(path, { format: 'codex', cwd: '/nowhere' });
    for (let tries = 0; !verdict.live; tries += 1) {
      assert.ok(tries < 200, 'the fake codex never held its file');
      await new Promise((resolve) => setTimeout(resolve, 25));
      verdict = await sessionLiveness(path, { format: 'codex', cwd: '/nowhere' });
    }
    assert.deepEqual(verdict.owners, [
      { pid: child.pid, program: 'codex', matched: `it has ${held} open, in the session's folder` },
    ]);
    await killed(child);
    assert.deepEqual(await sessionLiveness(path, { format: 'codex', cwd: '/nowhere' }), {
      live: false,
    });
  });
});
