import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
} from '../../src/revival/texts.ts';
import { peek } from '../../src/transcript/peek.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { parseReconciledInput } from '../../src/runs/reconciled-input.ts';
import { fileUiSource } from '../../src/ui/file-ui-source.ts';
import { startUiServer } from '../../src/ui/ui-server.ts';
import { REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';

/*
 * `llm-agent revive` with an agents module whose tool can reconcile: each call in flight is
 * asked about when the plan is made, and the plan shows each answer (completed: recovered with
 * its output; did not happen; a throw: interrupted) before anyone confirms — nothing is written
 * before. Once confirmed, the revival records exactly those answers, asking nothing again. The
 * ui's plan shows the same, having loaded the module in its own process, and its Confirm hands
 * the answers shown to the revive it starts. The run is the frozen v2 fixture of three charges
 * in flight; the tool's reconcile appends each question to `asked.log`.
 */

const IN_FLIGHT = fileURLToPath(new URL('../fixtures/v2/in-flight.jsonl', import.meta.url));

async function writeAgents(folder: string): Promise<void> {
  const scripted = join(REPO, 'src/demo/prompt-model.ts');
  const deps = join(REPO, 'test/cli/support/fixture-deps.ts');
  await writeFile(
    join(folder, 'agents.ts'),
    `import { appendFileSync, writeFileSync } from 'node:fs';
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
          appendFileSync(join(marks, 'asked.log'), input.order + '\\n');
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

async function setUp(): Promise<string> {
  const folder = await temporaryFolder();
  await mkdir(join(folder, 'runs'));
  await mkdir(join(folder, 'marks'));
  await copyFile(IN_FLIGHT, join(folder, 'runs/main.jsonl'));
  await writeAgents(folder);
  return folder;
}

/** The questions the reconcile was asked, in order; executions of the tool, if any. */
async function marks(folder: string): Promise<{ asked: string[]; executed: string[] }> {
  const log = await readFile(join(folder, 'marks/asked.log'), 'utf8').catch(() => '');
  const files = await readdir(join(folder, 'marks'));
  return {
    asked: log.split('\n').filter((line) => line !== ''),
    executed: files.filter((name) => name.startsWith('executed-')),
  };
}

/** The answers recorded for each call of the run. */
async function recordedAnswers(path: string): Promise<Map<string, unknown>> {
  const read = await peek(path);
  assert.ok(read.ok);
  const answers = new Map<string, unknown>();
  for (const record of read.records.filter(isKnownRecord)) {
    if (record.type !== 'message' || record.role !== 'tool') continue;
    for (const part of record.content) {
      if (part.type === 'tool-result') answers.set(part.callId, part.output);
    }
  }
  return answers;
}

const PLAN_LINES = [
  /Reconciled: asked now, when the plan was made \(a reconcile only looks\):/,
  /main: charge call-a completed: the model reads its output, marked recovered after the crash — \{"chargeId":"ch_A","cents":1200\}/,
  /main: charge call-b did not happen: the model reads that it did not take effect, NOT retried/,
  /main: charge call-c unknown \(reconcile threw: the provider did not answer\): answered as interrupted, outcome unknown/,
  /what the tools answered is what the revival records; nothing is run again/,
];

function assertRecordedAsShown(answers: Map<string, unknown>): void {
  assert.deepEqual(answers.get('call-a'), {
    recovered: RECOVERED_NOTE,
    output: { chargeId: 'ch_A', cents: 1200 },
  });
  assert.equal(answers.get('call-b'), DID_NOT_HAPPEN_MESSAGE);
  assert.equal(answers.get('call-c'), INTERRUPTED_MESSAGE);
}

describe('llm-agent revive: tools that reconcile', { timeout: 120_000 }, () => {
  const folders: string[] = [];
  const fresh = async () => {
    const folder = await setUp();
    folders.push(folder);
    return folder;
  };
  after(async () => {
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  test('the plan shows what each reconcile answered before anyone confirms; nothing is written', async () => {
    const folder = await fresh();
    const before = await readFile(join(folder, 'runs/main.jsonl'));
    // Off a terminal without --yes: the plan is shown, then the command refuses to go on.
    const result = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts'], {
      cwd: folder,
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /pass --yes/);
    for (const line of PLAN_LINES) assert.match(result.stdout, line);
    assert.deepEqual(await marks(folder), { asked: ['A', 'B', 'C'], executed: [] });
    assert.ok((await readFile(join(folder, 'runs/main.jsonl'))).equals(before));
  });

  test('--yes: the answers shown are recorded, each asked once, said on stderr; nothing is run again', async () => {
    const folder = await fresh();
    const result = await runCli(['revive', 'runs/main.jsonl', '--agents', 'agents.ts', '--yes'], {
      cwd: folder,
    });
    assert.equal(result.code, 0, result.stderr);
    for (const line of PLAN_LINES) assert.match(result.stdout, line);
    assert.match(result.stderr, /\[main\] reconcile of charge call-a: completed\n/);
    assert.match(result.stderr, /\[main\] reconcile of charge call-b: did-not-happen\n/);
    assert.match(
      result.stderr,
      /\[main\] reconcile of charge call-c: unknown \(reconcile threw: the provider did not answer\)\n/,
    );
    assert.deepEqual(await marks(folder), { asked: ['A', 'B', 'C'], executed: [] });
    assertRecordedAsShown(await recordedAnswers(join(folder, 'runs/main.jsonl')));
  });

  test("the ui's plan shows the answers, asks once while the page is redrawn, and hands them to its revive", async () => {
    const folder = await fresh();
    const source = fileUiSource(['runs'], folder, { agents: 'agents.ts', env: {} });
    try {
      const { roots } = await source.tree();
      const action = await source.action(roots);
      await source.action(roots);
      for (const line of PLAN_LINES) assert.match(action.text, line);
      assert.match(
        action.table ?? '',
        /<li data-answer="completed">main: <strong>charge<\/strong> <code>call-a<\/code>/,
      );
      assert.match(
        action.table ?? '',
        /<li data-answer="unknown">main: <strong>charge<\/strong> <code>call-c<\/code>/,
      );
      assert.deepEqual(action.argv, [
        'revive',
        '--yes',
        '--agents',
        'agents.ts',
        '--reconciled-stdin',
        '--',
        'runs',
      ]);
      const handed = parseReconciledInput(action.input ?? '', 'the action');
      assert.deepEqual(
        [...handed.values()].flat().map((answer) => `${answer.callId}:${answer.answer}`),
        ['call-a:completed', 'call-b:did-not-happen', 'call-c:unknown'],
      );
      assert.deepEqual(await marks(folder), { asked: ['A', 'B', 'C'], executed: [] }, 'asked once');
    } finally {
      await source.close();
    }
  });

  test("the ui's Confirm: the revive records the answers the page showed and asks nothing again", async () => {
    const folder = await fresh();
    const server = await startUiServer({
      source: fileUiSource(['runs'], folder, { agents: 'agents.ts', env: {} }),
      cwd: folder,
      env: process.env,
      port: 0,
    });
    try {
      const page = await get(`http://127.0.0.1:${server.port}/${server.token}/`, server.token);
      assert.match(page, /id="plan-reconcile"/);
      assert.match(page, /<code>call-b<\/code> did not happen/);
      assert.deepEqual((await marks(folder)).asked, ['A', 'B', 'C']);
      assert.equal(
        await post(`http://127.0.0.1:${server.port}/${server.token}/revive`, server.token),
        202,
      );
      const path = join(folder, 'runs/main.jsonl');
      for (let wait = 0; (await recordedAnswers(path)).size < 3; wait += 1) {
        assert.ok(wait < 600, 'the revive recorded its answers within 60 s');
        await new Promise((done) => setTimeout(done, 100));
      }
      assertRecordedAsShown(await recordedAnswers(path));
      assert.deepEqual(
        await marks(folder),
        { asked: ['A', 'B', 'C'], executed: [] },
        'not asked again',
      );
    } finally {
      await server.close();
    }
  });

  test('--reconciled-stdin: answers given are recorded for their open calls only; bad ones are refused before any write', async () => {
    const folder = await fresh();
    const path = join(folder, 'runs/main.jsonl');
    const before = await readFile(path);
    const argv = [
      'revive',
      'runs/main.jsonl',
      '--agents',
      'agents.ts',
      '--yes',
      '--reconciled-stdin',
    ];
    for (const [input, reason] of [
      ['{', /stdin: the reconcile answers are not JSON/],
      ['{"version":2,"runs":[]}', /stdin: not reconcile answers of version 1 at version/],
      [
        JSON.stringify({
          version: 1,
          runs: [
            {
              path,
              answers: [
                { callId: 'call-a', toolName: 'charge', idempotencyKey: 'k', answer: 'completed' },
              ],
            },
          ],
        }),
        /a completed answer needs its output/,
      ],
    ] as const) {
      const refused = await runCli(argv, { cwd: folder, input });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, reason);
      assert.ok((await readFile(path)).equals(before), 'nothing written');
    }
    assert.deepEqual(await marks(folder), { asked: [], executed: [] });
    const read = await peek(path);
    assert.ok(read.ok);
    const keyOf = new Map<string, string>();
    for (const record of read.records.filter(isKnownRecord)) {
      if (record.type === 'tool-dispatched' && record.idempotencyKey !== undefined) {
        keyOf.set(record.callId, record.idempotencyKey);
      }
    }
    // call-a: said not to have happened, with its key; call-b: an answer for another key.
    const given = {
      version: 1,
      runs: [
        {
          path,
          answers: [
            {
              callId: 'call-a',
              toolName: 'charge',
              idempotencyKey: keyOf.get('call-a'),
              answer: 'did-not-happen',
            },
            {
              callId: 'call-b',
              toolName: 'charge',
              idempotencyKey: 'not-its-key',
              answer: 'completed',
              output: 'x',
            },
          ],
        },
      ],
    };
    const result = await runCli(argv, { cwd: folder, input: JSON.stringify(given) });
    assert.equal(result.code, 0, result.stderr);
    const answers = await recordedAnswers(path);
    assert.equal(answers.get('call-a'), DID_NOT_HAPPEN_MESSAGE);
    assert.equal(
      answers.get('call-b'),
      INTERRUPTED_MESSAGE,
      'an answer for another key is not used',
    );
    assert.equal(answers.get('call-c'), INTERRUPTED_MESSAGE);
    assert.deepEqual(
      await marks(folder),
      { asked: [], executed: [] },
      'the run given was not asked',
    );
  });
});

function get(url: string, token: string): Promise<string> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, { headers: { 'X-LLM-Agent-Token': token } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => done(body));
    });
    request.on('error', fail);
    request.end();
  });
}

function post(url: string, token: string): Promise<number | undefined> {
  return new Promise((done, fail) => {
    const request = httpRequest(
      url,
      { method: 'POST', headers: { 'X-LLM-Agent-Token': token } },
      (response) => {
        response.resume();
        response.on('end', () => done(response.statusCode));
      },
    );
    request.on('error', fail);
    request.end();
  });
}
