/**
 * A command that ends cleanly closes every session it opened: its transcripts are no longer
 * held (a second writer can open each one at once) and it leaves no lock, nametag or claim
 * file behind. The commands run in this process, so a session left open would still hold its
 * writer lock when the command returns.
 */
import assert from 'node:assert/strict';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { createStyle } from '../../src/render/terminal-style.ts';
import { Session } from '../../src/transcript/session.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import {
  runCli,
  temporaryFolder,
  writeFixtureAgents,
  writeFixtureTree,
} from './support/cli-fixtures.ts';

async function inProcess(argv: string[], cwd: string): Promise<{ code: number; output: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let output = '';
  stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const stdin = new PassThrough();
  stdin.end();
  const code = await main(argv, {
    stdin,
    stdout,
    stderr,
    env: {},
    cwd,
    out: createStyle(false),
    err: createStyle(false),
  });
  return { code, output };
}

async function filesBelow(folder: string): Promise<string[]> {
  return (await readdir(folder, { recursive: true, encoding: 'utf8' })).sort();
}

/** Every transcript below folder can be opened for writing right now (nobody holds it). */
async function assertAllFree(folder: string): Promise<number> {
  const transcripts = (await filesBelow(folder)).filter((name) => name.endsWith('.jsonl'));
  for (const name of transcripts) {
    try {
      const session = await Session.open(join(folder, name));
      await session.close();
    } catch (error) {
      if (TranscriptError.isInstance(error)) assert.fail(`${name} is still held: ${error.message}`);
      throw error;
    }
  }
  return transcripts.length;
}

const LEFTOVER = /\.jsonl\.(lock|owner|claim)$/;

describe('clean exits close every session they open', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFixtureTree(folder);
    await writeFixtureAgents(folder);
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('the check sees a session left open in this process', async () => {
    const held = await Session.create(
      join(folder, 'held', 'held.jsonl'),
      { agentId: 'held', agentType: 'solo', label: 'held', model: 'openai:gpt-5' },
      { durability: 'none' },
    );
    try {
      await assert.rejects(assertAllFree(join(folder, 'held')), /held\.jsonl is still held/);
    } finally {
      await held.close();
    }
    assert.equal(await assertAllFree(join(folder, 'held')), 1);
  });

  test('run: the transcript is free when the command returns, and no nametag or claim is left', async () => {
    const ran = await inProcess(
      ['run', '--agents', 'agents.ts', '--type', 'solo', '--out', 'solo/solo.jsonl', 'hi'],
      folder,
    );
    assert.equal(ran.code, 0, ran.output);
    assert.equal(await assertAllFree(join(folder, 'solo')), 1);
    const left = (await filesBelow(join(folder, 'solo'))).filter((name) =>
      /\.(owner|claim)$/.test(name),
    );
    assert.deepEqual(left, []);
  });

  test('revive --yes: every run of the tree is free afterwards, children included', async () => {
    const revived = await inProcess(
      ['revive', 'runs/main.jsonl', '--agents', 'agents.ts', '--yes'],
      folder,
    );
    assert.equal(revived.code, 0, revived.output);
    assert.equal(await assertAllFree(join(folder, 'runs')), 3);
    const left = (await filesBelow(join(folder, 'runs'))).filter((name) =>
      /\.(owner|claim)$/.test(name),
    );
    assert.deepEqual(left, []);
  });

  test('demo: no .lock, .owner or .claim file is left by a clean exit', async () => {
    const demoFolder = await temporaryFolder();
    try {
      const demo = await runCli(['demo', 'demo'], { cwd: demoFolder });
      assert.equal(demo.code, 0, demo.stderr);
      // The demo's first process is SIGKILLed: what it held is a crash's leftover, which the
      // revive that follows takes over and then releases.
      const left = (await filesBelow(join(demoFolder, 'demo'))).filter((name) =>
        LEFTOVER.test(name),
      );
      assert.deepEqual(left, []);
    } finally {
      await rm(demoFolder, { recursive: true, force: true });
    }
  });
});
