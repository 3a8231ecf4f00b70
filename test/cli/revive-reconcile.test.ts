import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
} from '../../src/revival/texts.ts';
import { peek } from '../../src/transcript/peek.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { fileUiSource } from '../../src/ui/file-ui-source.ts';
import { REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';

/*
 * `llm-agent revive` with an agents module whose tool can reconcile: the plan says which calls
 * in flight its reconcile will be asked about — and nothing is asked before the plan is
 * confirmed; once it is, each answer is said on stderr and settles its call (completed:
 * recovered; did not happen; a throw: interrupted). The ui's plan says the same, having loaded
 * the module in its own process. The run is the frozen v2 fixture of three charges in flight.
 */

const IN_FLIGHT = fileURLToPath(new URL('../fixtures/v2/in-flight.jsonl', import.meta.url));

async function writeAgents(folder: string): Promise<void> {
  const scripted = join(REPO, 'src/demo/prompt-model.ts');
  const deps = join(REPO, 'test/cli/support/fixture-deps.ts');
  await writeFile(
    join(folder, 'agents.ts'),
    `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPromptModel } from ${JSON.stringify(scripted)};
import { z } from ${JSON.stringify(deps)};

const marks = ${JSON.stringify(join(folder, 'marks'))};
export default {
  main: {
    description: 'Charges orders',
    system: 'main',
    model: createPromptModel({ script: () => ({ text: 'main done' }) }),
    tools: [
      {
        name: 'orders',
        description: 'Lists the open orders',
        inputSchema: z.object({}),
        idempotency: 'read-only',
        execute: async () => [],
      },
      {
        name: 'charge',
        description: 'Charges an order',
        inputSchema: z.object({ order: z.string(), cents: z.number().int() }),
        idempotency: 'side-effect',
        execute: async (input) => {
          writeFileSync(join(marks, 'executed-' + input.order), '');
          return 'charged';
        },
        reconcile: async (input) => {
          writeFileSync(join(marks, 'asked-' + input.order), '');
          if (input.order === 'A') return { outcome: 'completed', output: { chargeId: 'ch_A', cents: input.cents } };
          if (input.order === 'B') return { outcome: 'did-not-happen' };
          throw new Error('the provider did not answer');
        },
      },
    ],
  },
};
`,
  );
}

describe('llm-agent revive: tools that reconcile', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await mkdir(join(folder, 'runs'));
    await mkdir(join(folder, 'marks'));
    await copyFile(IN_FLIGHT, join(folder, 'runs/main.jsonl'));
    await writeAgents(folder);
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('the plan names the calls a reconcile will be asked about, and nothing is asked before confirming', async () => {
    const before = await readFile(join(folder, 'runs/main.jsonl'));
    const result = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts'], {
      cwd: folder,
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stdout, /Reconcile, once you confirm \(nothing is asked before\):/);
    for (const callId of ['call-a', 'call-b', 'call-c']) {
      assert.match(
        result.stdout,
        new RegExp(
          `main: ask charge's reconcile about ${callId} instead of answering it as interrupted outright`,
        ),
      );
    }
    assert.match(
      result.stdout,
      /completed → its output, marked recovered; did not happen → said so, NOT retried/,
    );
    assert.deepEqual(await readdir(join(folder, 'marks')), [], 'no reconcile was asked');
    assert.ok((await readFile(join(folder, 'runs/main.jsonl'))).equals(before));
  });

  test("the ui's plan says the same, from the module it loaded", async () => {
    const source = fileUiSource(['runs'], folder, { agents: 'agents.ts', env: {} });
    try {
      const { roots } = await source.tree();
      const action = await source.action(roots);
      assert.match(action.text, /main: ask charge's reconcile about call-a/);
      assert.match(action.table ?? '', /id="plan-reconcile"/);
      assert.match(action.table ?? '', /<code>call-c<\/code>/);
      assert.deepEqual(await readdir(join(folder, 'marks')), [], 'no reconcile was asked');
    } finally {
      await source.close();
    }
  });

  test('--yes: each reconcile is asked, said on stderr, and settles its call; nothing is run again', async () => {
    const result = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts', '--yes'], {
      cwd: folder,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /\[main\] reconcile of charge call-a: completed\n/);
    assert.match(result.stderr, /\[main\] reconcile of charge call-b: did-not-happen\n/);
    assert.match(
      result.stderr,
      /\[main\] reconcile of charge call-c: unknown \(reconcile threw: the provider did not answer\)\n/,
    );
    assert.deepEqual((await readdir(join(folder, 'marks'))).sort(), [
      'asked-A',
      'asked-B',
      'asked-C',
    ]);
    const read = await peek(join(folder, 'runs/main.jsonl'));
    assert.ok(read.ok);
    const answers = new Map<string, unknown>();
    for (const record of read.records.filter(isKnownRecord)) {
      if (record.type !== 'message' || record.role !== 'tool') continue;
      for (const part of record.content) {
        if (part.type === 'tool-result') answers.set(part.callId, part.output);
      }
    }
    assert.deepEqual(answers.get('call-a'), {
      recovered: RECOVERED_NOTE,
      output: { chargeId: 'ch_A', cents: 1200 },
    });
    assert.equal(answers.get('call-b'), DID_NOT_HAPPEN_MESSAGE);
    assert.equal(answers.get('call-c'), INTERRUPTED_MESSAGE);
  });
});
