import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import {
  appendFile,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ForeignFormat, firstLine } from '../../src/repair/foreign-format.ts';
import { readProcessTable } from '../../src/repair/process-table.ts';
import { repairSession } from '../../src/repair/repair-session.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';

/*
 * The shell every format shares (src/repair/repair-session.ts), on a toy format: `{"toy":V}`
 * first, then `{"call":ID}` and `{"result":ID}` lines. What it promises: append-only, a
 * byte-exact backup before the first write, a torn last line kept out of the data (sidecar,
 * then a newline first), refusals that write nothing, idempotence.
 */

const toyFormat: ForeignFormat = {
  name: 'pi',
  detect(lines) {
    const first = firstLine(lines)?.value as { toy?: unknown } | undefined;
    if (typeof first?.toy !== 'number') return null;
    return first.toy === 1
      ? { format: 'pi', version: `toy ${first.toy}`, supported: true }
      : { format: 'pi', version: `toy ${first.toy}`, supported: false, reason: 'untested' };
  },
  plan(session) {
    const lines = [...session];
    const calls = lines.flatMap((line) => {
      const value = line.value as { call?: string } | undefined;
      return typeof value?.call === 'string' ? [{ callId: value.call, line: line.number }] : [];
    });
    const answered = new Set(
      lines.map((line) => (line.value as { result?: string } | undefined)?.result),
    );
    const open = calls.filter((call) => !answered.has(call.callId));
    if (open.length === 0) return { kind: 'clean', detail: 'every call has its result' };
    return {
      kind: 'repair',
      calls: open.map((call) => ({ ...call, toolName: 'toy' })),
      append: open.map((call) => JSON.stringify({ result: call.callId, interrupted: true })),
    };
  },
};
const formats = [toyFormat];
const OLD = new Date(Date.now() - 60_000);

let folder: string;
before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-repair-'));
});
after(async () => {
  await rm(folder, { recursive: true, force: true });
});

let counter = 0;
/** A session file with these bytes, last changed a minute ago (not live). */
async function session(text: string): Promise<string> {
  const path = join(folder, `s${counter++}.jsonl`);
  await writeFile(path, text, { mode: 0o600 });
  await utimes(path, OLD, OLD);
  return path;
}

describe('repairSession (the shell, on a toy format)', () => {
  test('append-only, with a byte-exact backup; a second repair changes nothing', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n{"result":"a"}\n{"call":"b"}\n{"call":"c"}\n';
    const path = await session(original);
    const outcome = await repairSession(path, { formats });
    assert.equal(outcome.status, 'repaired');
    assert.ok(outcome.status === 'repaired');
    assert.deepEqual(
      outcome.calls.map((call) => call.callId),
      ['b', 'c'],
    );
    const after = await readFile(path, 'utf8');
    assert.ok(after.startsWith(original), 'the original bytes are a prefix');
    assert.equal(
      after.slice(original.length),
      '{"result":"b","interrupted":true}\n{"result":"c","interrupted":true}\n',
    );
    assert.equal(await readFile(outcome.backup, 'utf8'), original, 'the backup is byte-exact');
    await utimes(path, OLD, OLD);
    const again = await repairSession(path, { formats });
    assert.equal(again.status, 'clean');
    assert.equal(
      await readFile(path, 'utf8'),
      after,
      'idempotent: nothing written the second time',
    );
  });

  test('a torn last line goes to a sidecar, is never parsed, and a newline comes first', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n{"result":"a","tr';
    const path = await session(original);
    const outcome = await repairSession(path, { formats });
    assert.ok(outcome.status === 'repaired', JSON.stringify(outcome));
    // The torn result is not data: call a is still unanswered, and answered by the repair.
    assert.deepEqual(
      outcome.calls.map((call) => call.callId),
      ['a'],
    );
    assert.equal(await readFile(outcome.sidecar as string, 'utf8'), '{"result":"a","tr');
    assert.equal(await readFile(path, 'utf8'), `${original}\n{"result":"a","interrupted":true}\n`);
  });

  test('--dry-run plans and writes nothing; refusals write nothing', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const path = await session(original);
    const planned = await repairSession(path, { formats, dryRun: true });
    assert.ok(planned.status === 'planned');
    assert.deepEqual(planned.append, ['{"result":"a","interrupted":true}']);

    const untested = await session('{"toy":2}\n{"call":"a"}\n');
    const refusedVersion = await repairSession(untested, { formats });
    assert.ok(refusedVersion.status === 'refused');
    assert.equal(refusedVersion.reason, 'unsupported-version');
    assert.match(refusedVersion.detail, /toy 2: untested/);

    const unknown = await session('{"something":"else"}\n');
    const refusedFormat = await repairSession(unknown, { formats });
    assert.ok(refusedFormat.status === 'refused');
    assert.equal(refusedFormat.reason, 'unknown-format');

    assert.equal(await readFile(path, 'utf8'), original);
    assert.equal(await readFile(untested, 'utf8'), '{"toy":2}\n{"call":"a"}\n');
    const names = await readdir(folder);
    for (const file of [path, untested, unknown]) {
      const backups = names.filter((name) => name.startsWith(`${basename(file)}.bak-`));
      assert.deepEqual(backups, [], `no backup of ${file}: nothing was written`);
    }
  });

  test('a file over the limit (256 MiB unless told) is refused unread, and nothing is written', async () => {
    // Sparse: 257 MiB long, next to nothing on disk — had it been read, 257 MiB would have been
    // allocated and parsed.
    const path = await session('{"toy":1}\n{"call":"a"}\n');
    await truncate(path, 257 * 1024 * 1024);
    await utimes(path, OLD, OLD);
    const before = await readdir(folder);
    const refused = await repairSession(path, { formats });
    assert.ok(refused.status === 'refused');
    assert.equal(refused.reason, 'too-large');
    assert.match(refused.detail, /269484032 bytes, over the 268435456-byte limit of repair/);
    assert.equal((await stat(path)).size, 257 * 1024 * 1024);
    assert.deepEqual(await readdir(folder), before, 'no backup, no sidecar');

    const small = await session('{"toy":1}\n{"call":"a"}\n');
    const limited = await repairSession(small, { formats, maxBytes: 10 });
    assert.ok(limited.status === 'refused');
    assert.equal(limited.reason, 'too-large');
    assert.equal(await readFile(small, 'utf8'), '{"toy":1}\n{"call":"a"}\n');
    assert.equal((await repairSession(small, { formats, maxBytes: 64 })).status, 'repaired');
    await rm(path);
  });

  test('a file changed seconds ago, or open in another process, is live: refused unless --force', async () => {
    const recent = join(folder, 'recent.jsonl');
    await writeFile(recent, '{"toy":1}\n{"call":"a"}\n');
    // Written just now: well inside a ten-minute quiet window, however slow the machine.
    const refused = await repairSession(recent, { formats, quietMs: 600_000 });
    assert.ok(refused.status === 'refused');
    assert.equal(refused.reason, 'live');
    assert.match(refused.detail, /changed \d+ ms ago/);
    assert.equal(await readFile(recent, 'utf8'), '{"toy":1}\n{"call":"a"}\n');
    const forced = await repairSession(recent, { formats, force: true });
    assert.equal(forced.status, 'repaired');

    const held = await session('{"toy":1}\n{"call":"a"}\n');
    const holder = spawn(
      process.execPath,
      ['-e', `require('fs').openSync(${JSON.stringify(held)}, 'a'); setInterval(() => {}, 1000)`],
      { stdio: 'ignore' },
    );
    try {
      // The fault is real: the other process has the file open before the repair looks.
      const holds = async () =>
        (await readProcessTable()).processes.some(
          (entry) =>
            entry.pid === holder.pid && entry.descriptors.some((one) => one.target === held),
        );
      for (let tries = 0; !(await holds()); tries += 1) {
        assert.ok(tries < 200, 'the holder never opened the file');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const open = await repairSession(held, { formats });
      assert.ok(open.status === 'refused');
      assert.equal(open.reason, 'live');
      assert.match(
        open.detail,
        new RegExp(`pid ${holder.pid} \\(node\\): it has the session file open`),
      );
      assert.match(open.detail, /First stop that client \(or wait for its tool to finish\)/);
      // A process table read with no time left says it did not look at every process, and a
      // repair given such a table refuses: what was not looked at may hold the file.
      const cut = await readProcessTable({ budgetMs: 0 });
      assert.deepEqual(cut, { processes: [], complete: false });
      const unsure = await repairSession(await session('{"toy":1}\n{"call":"a"}\n'), {
        formats,
        processTable: async () => cut,
      });
      assert.ok(unsure.status === 'refused');
      assert.match(unsure.detail, /not every process could be looked at/);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  test('a write that fails leaves the original bytes and the backup; the next repair completes', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const path = await session(original);
    const faulty = new FaultyFileSystem(nodeFileSystem, {
      rules: [{ operation: 'write', path, fault: { kind: 'error', code: 'ENOSPC' } }],
    });
    const failed = await repairSession(path, { formats, fileSystem: faulty });
    assert.equal(faulty.fired.length, 1, 'the fault fired');
    assert.ok(failed.status === 'refused');
    assert.equal(failed.reason, 'io-error');
    assert.equal(await readFile(path, 'utf8'), original);
    const backups = (await readdir(folder)).filter((name) =>
      name.startsWith(`${basename(path)}.bak-`),
    );
    assert.equal(backups.length, 1, 'the backup was written before the failed append');
    assert.equal(await readFile(join(folder, backups[0] as string), 'utf8'), original);
    const retried = await repairSession(path, { formats });
    assert.ok(retried.status === 'repaired');
    assert.equal(await readFile(path, 'utf8'), `${original}{"result":"a","interrupted":true}\n`);
  });

  test('a whole last record without its newline is data: its call is not answered twice', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n{"result":"a"}\n{"call":"b"}';
    const path = await session(original);
    const outcome = await repairSession(path, { formats });
    assert.ok(outcome.status === 'repaired', JSON.stringify(outcome));
    assert.deepEqual(
      outcome.calls.map((call) => call.callId),
      ['b'],
    );
    assert.equal(outcome.sidecar, undefined, 'nothing torn to keep aside');
    assert.equal(await readFile(path, 'utf8'), `${original}\n{"result":"b","interrupted":true}\n`);
  });

  test('a file that changes between two passes of the plan (same size) is refused, nothing written', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const rewritten = '{"toy":1}\n{"call":"z"}\n';
    const path = await session(original);
    let rewrote = false;
    // A format that reads the file twice; the client rewrites it in place in between.
    const twoPasses: ForeignFormat = {
      ...toyFormat,
      plan(lines, context) {
        const first = [...lines].length;
        writeFileSync(path, rewritten);
        rewrote = true;
        assert.equal([...lines].length, first, 'the second pass reads as many lines');
        return toyFormat.plan(lines, context);
      },
    };
    const outcome = await repairSession(path, { formats: [twoPasses] });
    assert.ok(rewrote, 'the file really changed between the passes');
    assert.ok(outcome.status === 'refused', JSON.stringify(outcome));
    assert.equal(outcome.reason, 'live');
    assert.match(outcome.detail, /changed while it was read/);
    assert.equal(await readFile(path, 'utf8'), rewritten);
    const left = (await readdir(folder)).filter((name) => name.startsWith(`${basename(path)}.`));
    assert.deepEqual(left, [], 'no backup, no sidecar');
  });

  test('a file changed after it was read (same size) is not appended to, and nothing is written', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const path = await session(original);
    const rewritten = '{"toy":1}\n{"call":"z"}\n';
    assert.equal(rewritten.length, original.length);
    let changed = false;
    const faulty = new FaultyFileSystem(nodeFileSystem, {
      beforeCall: async (call) => {
        // Between the read and the append, the client rewrites the file in place.
        if (call.operation === 'open' && call.mode === 'append' && call.path === path) {
          await writeFile(path, rewritten);
          changed = true;
        }
      },
    });
    const outcome = await repairSession(path, { formats, fileSystem: faulty });
    assert.ok(changed, 'the file really changed between the read and the append');
    assert.ok(outcome.status === 'refused', JSON.stringify(outcome));
    assert.equal(outcome.reason, 'live');
    assert.match(outcome.detail, /changed after it was read/);
    assert.equal(await readFile(path, 'utf8'), rewritten);
    const backups = (await readdir(folder)).filter((name) => name.startsWith(`${basename(path)}.`));
    assert.deepEqual(backups, [], 'no backup, no sidecar');
  });

  test('a line the client writes while the backup is written: the late check on the appending descriptor refuses, and the backup is taken back', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const path = await session(original);
    const client = '{"user":"go on"}\n';
    let wrote = false;
    const faulty = new FaultyFileSystem(nodeFileSystem, {
      beforeCall: async (call) => {
        // After the first check, while the backup is synced: the client appends a line.
        if (!wrote && call.operation === 'syncFolder') {
          await appendFile(path, client);
          wrote = true;
        }
      },
    });
    const outcome = await repairSession(path, { formats, fileSystem: faulty });
    assert.ok(wrote, 'the client really wrote after the first check');
    assert.ok(outcome.status === 'refused', JSON.stringify(outcome));
    assert.equal(outcome.reason, 'live');
    assert.match(outcome.detail, /changed while the backup was written/);
    assert.equal(await readFile(path, 'utf8'), `${original}${client}`, 'nothing of ours appended');
    const left = (await readdir(folder)).filter((name) => name.startsWith(`${basename(path)}.`));
    assert.deepEqual(left, [], 'the backup made for this repair is taken back');
  });

  test('a line the client writes between the last check and the answer: repaired, and it says so', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const path = await session(original);
    const client = '{"user":"go on"}\n';
    let wrote = false;
    const faulty = new FaultyFileSystem(nodeFileSystem, {
      beforeCall: async (call) => {
        // The window no check can close: after the last look, before our write lands.
        if (!wrote && call.operation === 'write' && call.path === path) {
          await appendFile(path, client);
          wrote = true;
        }
      },
    });
    const outcome = await repairSession(path, { formats, fileSystem: faulty });
    assert.ok(wrote, 'the client really wrote in the window');
    assert.ok(outcome.status === 'repaired', JSON.stringify(outcome));
    assert.match(
      outcome.interleaved ?? '',
      /17 bytes now stand before \(or among\) the appended lines/,
    );
    assert.match(outcome.interleaved ?? '', /the backup lacks those bytes/);
    assert.equal(
      await readFile(path, 'utf8'),
      `${original}${client}{"result":"a","interrupted":true}\n`,
    );
    assert.equal(await readFile(outcome.backup, 'utf8'), original);

    const clean = await repairSession(await session(original), { formats });
    assert.ok(clean.status === 'repaired');
    assert.equal(clean.interleaved, undefined, 'nothing in between: nothing said');
  });

  test("a file two formats both recognise (another client's line inside) is refused as mixed, naming both", async () => {
    const other: ForeignFormat = {
      name: 'claude-code',
      detect: (lines) =>
        [...lines].some(
          (line) => (line.value as { envelope?: unknown } | undefined)?.envelope === true,
        )
          ? { format: 'claude-code', version: '2.1.197', supported: true }
          : null,
      plan: () => ({ kind: 'repair', calls: [], append: ['{"wrong":true}'] }),
    };
    const original = '{"toy":1}\n{"call":"a"}\n{"envelope":true}\n';
    const path = await session(original);
    // The fault: the other format alone takes the file for its own, and would answer wrongly.
    assert.notEqual(other.detect([{ number: 3, text: '', value: { envelope: true } }]), null);
    const outcome = await repairSession(path, { formats: [other, toyFormat] });
    assert.ok(outcome.status === 'refused', JSON.stringify(outcome));
    assert.equal(outcome.reason, 'mixed-format');
    assert.match(outcome.detail, /read both as a claude-code 2\.1\.197 and as a pi toy 1 session/);
    assert.equal(await readFile(path, 'utf8'), original);
  });

  test('while another repair holds the file, a second one refuses', async () => {
    const original = '{"toy":1}\n{"call":"a"}\n';
    const path = await session(original);
    let asked = 0;
    const locked = {
      ...nodeFileSystem,
      tryLock: () => {
        asked += 1;
        return false;
      },
    };
    const outcome = await repairSession(path, { formats, fileSystem: locked });
    assert.equal(asked, 1, 'the lock was asked for');
    assert.ok(outcome.status === 'refused');
    assert.match(outcome.detail, /another repair of this file is running/);
    assert.equal(await readFile(path, 'utf8'), original);
  });
});
