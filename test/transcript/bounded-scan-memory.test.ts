import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import {
  buildTranscript,
  makeTempFolder,
  removeFolder,
  sampleBodies,
} from '../support/transcripts.ts';

/*
 * Every input is read in bounded memory. A scan keeps counters for bad lines, never copies of
 * them (60 MB of short junk lines once took 3.9 GB for 20 MB); a torn last line longer than a
 * scan buffers is streamed, not held (a 200 MB one took ~900 MB). Each read runs in a fresh
 * process that reports its peak RSS; its growth over the process's start (which loads the
 * TypeScript sources) is held to the goal, 150 MB — generous on purpose: it proves
 * boundedness, not speed (bench/memory-section.ts measures the whole process).
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NODE = join(REPO, 'node_modules/.bin/node');
const CHILD = join(REPO, 'test/support/scan-memory-child.ts');
const MB = 1000 * 1000;
const BOUND = 150 * MB;

function measure(
  op: string,
  path: string,
): Promise<{ answer: string; peakRss: number; baselineRss: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      [CHILD, op, path],
      { maxBuffer: 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${op}: ${error.message} ${stderr}`));
        else
          resolve(
            JSON.parse(stdout.trim()) as { answer: string; peakRss: number; baselineRss: number },
          );
      },
    );
  });
}

async function transcriptThen(
  path: string,
  bytes: number,
  fill: (chunk: Buffer) => void,
): Promise<void> {
  const built = buildTranscript(sampleBodies(6, 200));
  await appendFile(path, built.bytes);
  for (let written = 0; written < bytes; written += MB) {
    const chunk = Buffer.alloc(Math.min(MB, bytes - written), 0x61);
    fill(chunk);
    await appendFile(path, chunk);
  }
}

test('60 MB of short junk lines after the last record: scan, inspect and status stay under 150 MB', async () => {
  const folder = await makeTempFolder('llm-agent-memory-');
  try {
    const path = join(folder, 'junk.jsonl');
    const random = seededRandom(testSeed('bounded-scan-memory'));
    await transcriptThen(path, 60 * MB, (chunk) => {
      for (let at = 0; at < chunk.length; at += 8 + Math.floor(random() * 40)) {
        chunk[at] = 0x0a;
      }
    });
    for (const op of ['scan', 'inspect', 'status']) {
      const { answer, peakRss, baselineRss } = await measure(op, path);
      console.log(
        `${op}: peak ${(peakRss / MB).toFixed(0)} MB, ${(baselineRss / MB).toFixed(0)} MB at start`,
      );
      // It really read the junk: the answer names the damage after the last good record.
      assert.match(answer, /(damaged|unreadable): .*:7: .*lines end in one/, `${op}: ${answer}`);
      assert.ok(
        peakRss - baselineRss < BOUND,
        `${op}: peak RSS ${(peakRss / MB).toFixed(0)} MB, from ${(baselineRss / MB).toFixed(0)} MB`,
      );
    }
  } finally {
    await removeFolder(folder);
  }
});

test('a 200 MB torn last line: scan, inspect and status classify it without holding it', async () => {
  const folder = await makeTempFolder('llm-agent-memory-');
  try {
    const path = join(folder, 'torn.jsonl');
    let first = true;
    await transcriptThen(path, 200 * MB, (chunk) => {
      if (first)
        chunk.write('{"v":1,"seq":6,"type":"message","at":"2026-01-01T00:00:00.000Z","content":"');
      first = false;
    });
    for (const op of ['scan', 'inspect', 'status']) {
      const { answer, peakRss, baselineRss } = await measure(op, path);
      console.log(
        `${op}: peak ${(peakRss / MB).toFixed(0)} MB, ${(baselineRss / MB).toFixed(0)} MB at start`,
      );
      // The exact verdict each reader owes a crash's torn last line: a torn tail, read past;
      // the run before it revivable.
      const expected: Record<string, string> = {
        scan: 'torn-tail',
        inspect: 'revivable',
        status: 'torn',
      };
      assert.equal(answer, expected[op], `${op}: ${answer}`);
      assert.ok(
        peakRss - baselineRss < BOUND,
        `${op}: peak RSS ${(peakRss / MB).toFixed(0)} MB, from ${(baselineRss / MB).toFixed(0)} MB`,
      );
    }
  } finally {
    await removeFolder(folder);
  }
});
