import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { repairOpencodeDatabase } from '../../src/repair/opencode-database.ts';
import {
  OPENCODE_NEWEST_MIGRATION,
  OPENCODE_TESTED,
  planOpencode,
} from '../../src/repair/opencode-plan.ts';
import { repairFile } from '../../src/repair/repair-file.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';

/*
 * The opencode repair (src/repair/opencode-database.ts, opencode-plan.ts) on a database the real
 * opencode 1.18.33 left when it was killed while two bash calls ran
 * (test/fixtures/foreign/opencode/, see its README): a dry run writes nothing; a database
 * another process holds, or writes, is refused and left as it was; the repair sets both parts
 * to opencode's failed-tool state with their events in one transaction, after a backup that is
 * the database as it was; a schema or an opencode version it was not tested with is refused.
 */

const FIXTURE = new URL('../fixtures/foreign/opencode/crash-two-calls.db', import.meta.url);
const NOW = new Date('2026-12-04T10:00:00.000Z');
const folders: string[] = [];
after(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

async function copyOfFixture(edit?: (db: DatabaseSync) => void): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'opencode-repair-'));
  folders.push(folder);
  const path = join(folder, 'opencode.db');
  await copyFile(FIXTURE, path);
  if (edit !== undefined) {
    const db = new DatabaseSync(path);
    edit(db);
    db.close();
  }
  return path;
}

function query(path: string, sql: string): Record<string, unknown>[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const toolStates = (path: string) =>
  query(path, "SELECT data FROM part WHERE json_extract(data, '$.type') = 'tool' ORDER BY id").map(
    (row) => (JSON.parse(String(row.data)) as { state: Record<string, unknown> }).state,
  );

/** A node process that opens the database (and, with `write`, holds its write lock) until killed. */
async function holder(path: string, write: boolean): Promise<ChildProcess> {
  const code = `const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(${JSON.stringify(path)});
    ${write ? "db.exec('BEGIN IMMEDIATE');" : ''}
    console.log('holding'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
  return child;
}

describe('opencode database', () => {
  test('the fixture: two bash parts left running', () => {
    const states = toolStates(FIXTURE.pathname);
    assert.deepEqual(
      states.map((state) => state.status),
      ['running', 'running'],
    );
  });

  test('a dry run plans both calls and writes nothing', async () => {
    const path = await copyOfFixture();
    const before = await readFile(path);
    const outcome = await repairFile(path, { dryRun: true, clock: () => NOW });
    assert.equal(outcome.status, 'planned', JSON.stringify(outcome));
    assert.deepEqual(outcome.status === 'planned' ? outcome.calls.map((call) => call.callId) : [], [
      'call_long_1',
      'call_long_2',
    ]);
    assert.ok((await readFile(path)).equals(before));
    assert.deepEqual((await readdir(join(path, '..'))).sort(), ['opencode.db']);
  });

  test('repaired in one transaction with its events, after a backup of the database as it was', async () => {
    const path = await copyOfFixture();
    const sequenceBefore = Number(query(path, 'SELECT seq FROM event_sequence')[0]?.seq);
    const outcome = await repairOpencodeDatabase(path, { clock: () => NOW });
    assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
    if (outcome.status !== 'repaired') return;
    assert.deepEqual(outcome.detection, {
      format: 'opencode',
      version: '1.18.33',
      supported: true,
    });
    assert.equal(outcome.appended, 2);
    assert.deepEqual(
      toolStates(outcome.backup).map((state) => state.status),
      ['running', 'running'],
      'the backup is the database before the repair',
    );
    const states = toolStates(path);
    for (const state of states) {
      assert.deepEqual(Object.keys(state), ['status', 'input', 'error', 'metadata', 'time']);
      assert.equal(state.status, 'error');
      assert.equal(state.error, INTERRUPTED_MESSAGE);
      assert.equal((state.time as { end: number }).end, NOW.getTime());
    }
    const events = query(
      path,
      `SELECT id, seq, type, data FROM event WHERE seq > ${sequenceBefore} ORDER BY seq`,
    );
    assert.deepEqual(
      events.map((event) => [Number(event.seq), event.type]),
      [
        [sequenceBefore + 1, 'message.part.updated.1'],
        [sequenceBefore + 2, 'message.part.updated.1'],
      ],
    );
    for (const event of events) assert.match(String(event.id), /^evt_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    assert.deepEqual(
      events.map(
        (event) => (JSON.parse(String(event.data)) as { part: { state: unknown } }).part.state,
      ),
      states,
      'the log ends in the state the table holds',
    );
    assert.equal(Number(query(path, 'SELECT seq FROM event_sequence')[0]?.seq), sequenceBefore + 2);
    const again = await repairOpencodeDatabase(path, { clock: () => NOW });
    assert.equal(again.status, 'clean');
  });

  test('open in another process: refused as live, naming it, nothing written', async () => {
    const path = await copyOfFixture();
    const before = await readFile(path);
    const child = await holder(path, false);
    try {
      const outcome = await repairOpencodeDatabase(path, { clock: () => NOW });
      assert.equal(outcome.status, 'refused');
      assert.equal(outcome.status === 'refused' && outcome.reason, 'live');
      assert.match(
        outcome.status === 'refused' ? outcome.detail : '',
        new RegExp(`pid ${child.pid} `),
      );
      assert.match(outcome.status === 'refused' ? outcome.detail : '', /stop opencode first/);
      // A dry run, and so --scan, gives the verdict a repair would: live, not "planned".
      const dry = await repairFile(path, { dryRun: true, clock: () => NOW });
      assert.equal(dry.status === 'refused' && dry.reason, 'live', JSON.stringify(dry));
      const scan = await runCli(['repair', '--scan', '--json', join(path, '..')], {
        cwd: join(path, '..'),
      });
      assert.equal(scan.code, 0, scan.stderr);
      const [listed] = (JSON.parse(scan.stdout) as { sessions: Record<string, unknown>[] })
        .sessions;
      assert.equal(listed?.reason, 'live', scan.stdout);
      // --force goes on, saying what it risks.
      const forcedDry = await repairFile(path, { dryRun: true, force: true, clock: () => NOW });
      assert.equal(forcedDry.status, 'planned');
      assert.match(
        forcedDry.status === 'planned' ? (forcedDry.forced ?? '') : '',
        new RegExp(`--force\\) while pid ${child.pid} .*may overwrite the repair`),
      );
    } finally {
      child.kill('SIGKILL');
    }
    assert.ok((await readFile(path)).equals(before));
    assert.deepEqual(await readdir(join(path, '..')), ['opencode.db']);
  });

  test('open in another process, with --force: repaired, saying what it risked', async () => {
    const path = await copyOfFixture();
    const child = await holder(path, false);
    try {
      const outcome = await repairOpencodeDatabase(path, { force: true, clock: () => NOW });
      assert.equal(outcome.status, 'repaired', JSON.stringify(outcome));
      assert.match(
        outcome.status === 'repaired' ? (outcome.forced ?? '') : '',
        new RegExp(`Repaired anyway \\(--force\\) while pid ${child.pid} `),
      );
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('another connection holding the write lock: refused even with force, nothing written', async () => {
    const path = await copyOfFixture((db) => db.exec('PRAGMA journal_mode = WAL'));
    const child = await holder(path, true);
    try {
      const outcome = await repairOpencodeDatabase(path, { force: true, clock: () => NOW });
      assert.equal(outcome.status === 'refused' && outcome.reason, 'live', JSON.stringify(outcome));
    } finally {
      child.kill('SIGKILL');
    }
    assert.deepEqual(
      toolStates(path).map((state) => state.status),
      ['running', 'running'],
    );
    assert.equal(
      (await readdir(join(path, '..'))).filter((name) => name.includes('.bak-')).length,
      0,
    );
  });

  test('a schema migrated past the tested versions is refused, naming both', async () => {
    const path = await copyOfFixture((db) =>
      db
        .prepare('INSERT INTO migration (id, time_completed) VALUES (?, 0)')
        .run('20270101000000_next'),
    );
    const outcome = await repairOpencodeDatabase(path, { clock: () => NOW });
    assert.equal(outcome.status === 'refused' && outcome.reason, 'unsupported-version');
    assert.match(JSON.stringify(outcome), /20270101000000_next/);
    assert.match(JSON.stringify(outcome), new RegExp(OPENCODE_NEWEST_MIGRATION));
    assert.equal(toolStates(path)[0]?.status, 'running');
  });

  test('a session written by an untested opencode is refused, naming its version', async () => {
    const path = await copyOfFixture((db) => db.exec("UPDATE session SET version = '1.99.0'"));
    const outcome = await repairOpencodeDatabase(path, { clock: () => NOW });
    assert.equal(outcome.status === 'refused' && outcome.reason, 'unsupported-version');
    assert.match(JSON.stringify(outcome), /1\.99\.0/);
  });

  test('the tested range: a release between the oldest and the newest tested is repaired; outside, refused naming the range', async () => {
    const [oldest, newest] = [OPENCODE_TESTED[0], OPENCODE_TESTED.at(-1)];
    assert.deepEqual([oldest, newest], ['1.17.18', '1.18.34']);
    // 1.18.25 was not run, but lies inside the range the tested releases span.
    for (const version of ['1.17.18', '1.18.25', '1.18.34']) {
      const path = await copyOfFixture((db) =>
        db.prepare('UPDATE session SET version = ?').run(version),
      );
      const outcome = await repairOpencodeDatabase(path, { clock: () => NOW });
      assert.equal(outcome.status, 'repaired', `${version}: ${JSON.stringify(outcome)}`);
    }
    for (const [version, words] of [
      ['1.17.11', /"1\.17\.11", older than 1\.17\.18 .*opencode 1\.17\.18 to 1\.18\.34$/],
      ['1.18.35', /"1\.18\.35", newer than 1\.18\.34.*opencode 1\.17\.18 to 1\.18\.34$/],
      ['1.18.34-beta.1', /"1\.18\.34-beta\.1", older than 1\.17\.18 or not a release/],
    ] as const) {
      const path = await copyOfFixture((db) =>
        db.prepare('UPDATE session SET version = ?').run(version),
      );
      // --allow-newer is for Claude Code and Codex: an opencode database has no seen shapes.
      const outcome = await repairFile(path, { clock: () => NOW, allowNewer: true });
      assert.equal(outcome.status === 'refused' && outcome.reason, 'unsupported-version');
      assert.match(String(outcome.detection?.reason), words);
      assert.equal(toolStates(path)[0]?.status, 'running', 'nothing written');
    }
  });

  test('a schema not migrated as far as the tested releases is refused: an older opencode kept another event log', async () => {
    const path = await copyOfFixture((db) =>
      db.prepare('DELETE FROM migration WHERE id = ?').run(OPENCODE_NEWEST_MIGRATION),
    );
    const outcome = await repairOpencodeDatabase(path, { clock: () => NOW });
    assert.equal(outcome.status === 'refused' && outcome.reason, 'unsupported-version');
    assert.match(
      String(outcome.detection?.reason),
      /opened last by an opencode older than those repair was tested with/,
    );
    assert.equal(toolStates(path)[0]?.status, 'running');
  });

  test('a stuck part the repair does not know is refused; the plan never throws', () => {
    const rows = {
      migrations: [OPENCODE_NEWEST_MIGRATION],
      sessions: [{ id: 's', version: '1.18.33' }],
      parts: [{ id: 'p', messageId: 'm', sessionId: 's', data: '{"type":"tool","state":{}}' }],
      sequences: [],
      nextModel: [],
    };
    const context = { now: NOW, randomBytes: (n: number) => new Uint8Array(n) };
    assert.equal(planOpencode(rows, context).kind, 'refuse');
    for (const data of ['null', '[]', '{"type":"tool","tool":1}', '{', '"x"']) {
      assert.equal(
        planOpencode({ ...rows, parts: [{ ...rows.parts[0], data } as never] }, context).kind,
        'refuse',
      );
    }
    assert.equal(
      planOpencode(
        {
          ...rows,
          nextModel: ['s'],
          parts: [
            {
              id: 'p',
              messageId: 'm',
              sessionId: 's',
              data: '{"type":"tool","tool":"bash","callID":"c","state":{"status":"running","input":{}}}',
            },
          ],
        },
        context,
      ).kind,
      'refuse',
    );
  });
});
