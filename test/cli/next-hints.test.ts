import assert from 'node:assert/strict';
import { access, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Session } from '../../src/transcript/session.ts';
import {
  runCli,
  temporaryFolder,
  writeFixtureAgents,
  writeFixtureTree,
} from './support/cli-fixtures.ts';

/** The command status prints after "Next:", as the words a shell would pass. */
function nextCommand(stdout: string): string[] {
  const found = /Next:\n {2}(llm-agent [^\n]+)\n/.exec(stdout);
  assert.ok(found !== null, stdout);
  return (found[1] as string).split(' ');
}

describe('every "Next:" hint can be pasted as it is', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFixtureTree(folder);
    await writeFixtureAgents(folder);
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('status --agents M --max-revivals N suggests revive with both, and that command works', async () => {
    const status = await runCli(
      ['status', 'runs', '--agents', 'agents.ts', '--max-revivals', '4'],
      {
        cwd: folder,
      },
    );
    assert.equal(status.code, 3, status.stderr);
    const words = nextCommand(status.stdout);
    assert.deepEqual(words, [
      'llm-agent',
      'revive',
      'runs/main.jsonl',
      '--agents',
      'agents.ts',
      '--max-revivals',
      '4',
    ]);
    // Pasted (with --yes: no terminal here to confirm at), it revives the tree to the end.
    const revived = await runCli([...words.slice(1), '--yes'], { cwd: folder });
    assert.equal(revived.code, 0, `${revived.stdout}\n${revived.stderr}`);
    assert.match(revived.stdout, /Revived runs:/);
  });

  test('without --agents, the hint says --agents MODULE and what MODULE is', async () => {
    const other = await temporaryFolder();
    try {
      await writeFixtureTree(other);
      const status = await runCli(['status', 'runs'], { cwd: other });
      assert.deepEqual(nextCommand(status.stdout).slice(3), ['--agents', 'MODULE']);
      assert.match(status.stdout, /^MODULE: the agents module the runs were started with/m);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('the hint says what revive would do, for every tree it covers', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    for (const tree of ['a', 'b']) await writeFixtureTree(join(folder, tree));
  });
  after(() => rm(folder, { recursive: true, force: true }));

  test('two trees without --agents: one revive line each, since each may need its own module', async () => {
    const status = await runCli(['status', 'a/runs', 'b/runs'], { cwd: folder });
    assert.equal(status.code, 3, status.stderr);
    assert.match(
      status.stdout,
      /Next:\n {2}llm-agent revive a\/runs\/main\.jsonl --agents MODULE\n {2}llm-agent revive b\/runs\/main\.jsonl --agents MODULE\nMODULE: for each, the agents module its runs were started with/,
    );
    // Given one module, the user says it serves both: one line.
    const given = await runCli(['status', 'a/runs', 'b/runs', '--agents', 'agents.ts'], {
      cwd: folder,
    });
    assert.deepEqual(nextCommand(given.stdout), [
      'llm-agent',
      'revive',
      'a/runs/main.jsonl',
      'b/runs/main.jsonl',
      '--agents',
      'agents.ts',
    ]);
  });

  test('a tree a live process holds is left out of the hint and of the tokens, as the plan leaves it', async () => {
    const before = JSON.parse(
      (await runCli(['status', 'a/runs', 'b/runs', '--json'], { cwd: folder })).stdout,
    );
    const session = await Session.open(join(folder, 'b', 'runs', 'main.jsonl'));
    try {
      const json = JSON.parse(
        (await runCli(['status', 'a/runs', 'b/runs', '--json'], { cwd: folder })).stdout,
      );
      const live = json.runs.find((run: { path: string }) => run.path === 'b/runs/main.jsonl');
      assert.equal(live?.state, 'running', 'the fault: a live process holds the root of b');
      const status = await runCli(['status', 'a/runs', 'b/runs'], { cwd: folder });
      const plan = await runCli(['revive', 'a/runs', 'b/runs', '--agents', 'none.ts'], {
        cwd: folder,
      });
      const planned = /Total: .*about (\d+) tokens/.exec(plan.stdout)?.[1];
      assert.ok(planned !== undefined, plan.stdout + plan.stderr);
      const said = /Reviving would send about (\d+) tokens/.exec(status.stdout)?.[1];
      assert.equal(said, planned, 'status says the tokens revive would send');
      assert.ok(
        Number(planned) < before.summary.resumeTokens,
        "b's revivable child is not counted",
      );
      assert.deepEqual(nextCommand(status.stdout).slice(0, 3), [
        'llm-agent',
        'revive',
        'a/runs/main.jsonl',
      ]);
      assert.equal(nextCommand(status.stdout).length, 5);
    } finally {
      await session.close();
    }
  });
});

describe('run refuses what status would not find, and says the real limits', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFixtureAgents(folder);
  });
  after(() => rm(folder, { recursive: true, force: true }));

  for (const out of ['x.txt', 'runs/x', 'runs/.jsonl', 'x.jsonl.bak']) {
    test(`--out ${out}: refused before anything is written`, async () => {
      const result = await runCli(
        ['run', '--agents', 'agents.ts', '--type', 'solo', '--out', out, 'hi'],
        {
          cwd: folder,
        },
      );
      assert.equal(result.code, 2, result.stderr);
      assert.equal(
        result.stderr,
        `llm-agent: run: --out ${JSON.stringify(out)} must name a .jsonl file (status and revive find transcripts by that ending)\n`,
      );
      await assert.rejects(access(join(folder, out)));
    });
  }

  test('--out x.jsonl is found by status afterwards', async () => {
    const result = await runCli(
      ['run', '--agents', 'agents.ts', '--type', 'solo', '--out', 'mine/x.jsonl', 'hi'],
      { cwd: folder },
    );
    assert.equal(result.code, 0, result.stderr);
    const status = await runCli(['status', 'mine'], { cwd: folder });
    assert.match(status.stdout, /^mine\/x\.jsonl \(solo\)/m);
  });

  test('an id too long is refused naming the limit of 64 (and 64 is accepted)', async () => {
    const long = 'a'.repeat(65);
    const refused = await runCli(
      ['run', '--agents', 'agents.ts', '--type', 'solo', '--id', long, 'hi'],
      {
        cwd: folder,
      },
    );
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /is not a valid agent id \(1 to 64 letters, digits, \. _ -;/);
    const accepted = await runCli(
      [
        'run',
        '--agents',
        'agents.ts',
        '--type',
        'solo',
        '--id',
        'a'.repeat(64),
        '--out',
        'ids/a.jsonl',
        'hi',
      ],
      { cwd: folder },
    );
    assert.equal(accepted.code, 0, accepted.stderr);
  });
});
