import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { writeTranscript } from '../../bench/status-corpus.ts';
import { tempFolder } from '../revival/support/temp-folder.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { runCli } from './support/cli-fixtures.ts';

const PREFIX = 'llm-agent status stats: ';

interface Stats {
  transcripts: number;
  index: string;
  indexSaved: boolean;
  fromIndex: number;
  read: number;
  inspected: number;
  ms: Record<string, number>;
}

function statsOf(stderr: string): Stats | null {
  const line = stderr.split('\n').find((candidate) => candidate.startsWith(PREFIX));
  return line === undefined ? null : (JSON.parse(line.slice(PREFIX.length)) as Stats);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('status: where its answers came from (LLM_AGENT_STATUS_STATS=1)', () => {
  test('says how many came from the index and how many were read, on stderr only when asked', async () => {
    const folder = await tempFolder('status-stats-');
    const cache = await tempFolder('status-stats-cache-');
    const runs = join(folder, 'runs');
    await mkdir(runs);
    const first = join(runs, 'run-0.jsonl');
    await writeTranscript(first, 'finished', 4000, seededRandom(7), { agentId: 'main' });
    // The index is kept over 500 transcripts.
    const count = 520;
    for (let index = 1; index < count; index += 1) {
      await copyFile(first, join(runs, `run-${index}.jsonl`));
    }
    // A file is kept only once it has not changed for two seconds.
    await pause(2100);
    const env = { XDG_CACHE_HOME: cache, LLM_AGENT_STATUS_STATS: '1' };
    const status = (extra: Record<string, string> = {}) =>
      runCli(['status', 'runs', '--json'], { cwd: folder, env: { ...env, ...extra } });

    const cold = await status();
    assert.equal(cold.code, 0, cold.stderr);
    const read = statsOf(cold.stderr);
    assert.ok(read !== null, cold.stderr);
    assert.deepEqual(
      [read.transcripts, read.index, read.fromIndex, read.read, read.inspected, read.indexSaved],
      [count, 'used', 0, count, 0, true],
    );
    for (const phase of ['start', 'walk', 'open', 'bulk', 'tree', 'output', 'total']) {
      assert.equal(typeof read.ms[phase], 'number', phase);
    }

    const warm = await status();
    assert.equal(warm.stdout, cold.stdout, 'the same answer from the index');
    const kept = statsOf(warm.stderr);
    assert.deepEqual(
      [kept?.fromIndex, kept?.read, kept?.indexSaved],
      [count, 0, false],
      warm.stderr,
    );

    const off = statsOf((await status({ LLM_AGENT_STATUS_INDEX: 'off' })).stderr);
    assert.deepEqual([off?.index, off?.fromIndex, off?.read], ['off', 0, count]);

    const quiet = await runCli(['status', 'runs', '--json'], {
      cwd: folder,
      env: { XDG_CACHE_HOME: cache },
    });
    assert.equal(quiet.stderr, '', 'nothing on stderr unless asked');
    assert.equal(quiet.stdout, cold.stdout);
  });

  test('status loads neither the AI SDK nor zod', async () => {
    const folder = await tempFolder('status-modules-');
    await writeTranscript(join(folder, 'a.jsonl'), 'revivable', 4000, seededRandom(8), {
      agentId: 'main',
    });
    // Every module loaded, listed on stderr at exit.
    const hook = `data:text/javascript,${encodeURIComponent(`
      import { registerHooks } from 'node:module';
      import { writeSync } from 'node:fs';
      const seen = [];
      registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });
      process.on('exit', () => writeSync(2, 'loaded: ' + JSON.stringify(seen) + '\\n'));
    `)}`;
    for (const args of [['--json'], []]) {
      const result = await runCli(['status', folder, ...args], {
        cwd: folder,
        env: { NODE_OPTIONS: `--import=${hook}` },
      });
      assert.equal(result.code, 3, result.stderr);
      const line = result.stderr.split('\n').find((text) => text.startsWith('loaded: '));
      assert.ok(line !== undefined, result.stderr);
      const loaded = JSON.parse(line.slice('loaded: '.length)) as string[];
      assert.ok(loaded.some((url) => url.includes('/src/cli/status-command.ts')));
      // The list has the packages it did load (the width of East Asian text, for the table).
      assert.ok(loaded.some((url) => url.includes('/node_modules/get-east-asian-width/')));
      const heavy = loaded.filter((url) => /\/node_modules\/(ai|zod|@ai-sdk)\//.test(url));
      assert.deepEqual(heavy, [], `status ${args.join(' ')} loaded them`);
    }
  });
});
