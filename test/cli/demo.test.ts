import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findTranscripts } from '../../src/runs/find-transcripts.ts';
import { DEMO_REPORT, DEMO_SECTIONS, sectionContent } from '../../src/demo/demo-script.ts';
import { INTERRUPTED_MESSAGE, Revival } from '../../src/revival/index.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { peek } from '../../src/transcript/peek.ts';
import { type CliResult, runCli, temporaryFolder } from './support/cli-fixtures.ts';

describe('llm-agent demo', () => {
  let folder = '';
  let demo: CliResult;
  before(async () => {
    folder = await temporaryFolder();
    demo = await runCli(['demo', 'walkthrough'], { cwd: folder });
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('runs offline to the end, every check holding', () => {
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    assert.match(demo.stdout, /All 10 checks held\./);
    assert.doesNotMatch(demo.stdout, /✗/);
  });

  test('the run process really was SIGKILLed, mid-write', () => {
    assert.match(demo.stdout, /child pid \d+ exit signal: SIGKILL \(exit code none\)/);
    const half = /write_file section-2\.md: (\d+) of (\d+) bytes are on disk/.exec(demo.stdout);
    assert.ok(half !== null, demo.stdout);
    assert.ok(Number(half[1]) > 0 && Number(half[1]) < Number(half[2]));
    // The run's own progress shows the call started and never ended in that process.
    const killedRun = demo.stderr
      .split('\n')
      .filter((line) => line.startsWith('  │ '))
      .join('\n');
    assert.match(killedRun, /\] → write_file \{"path":"section-2\.md"/);
    assert.doesNotMatch(killedRun, /\[lead\] finished/);
    assert.equal(
      (killedRun.match(/← write_file/g) ?? []).length,
      1,
      'only section-1.md was written',
    );
  });

  test('status saw the interrupted tree, revive brought it back, status then saw it finished', () => {
    const steps = demo.stdout.split(/\n(?=Step \d)/);
    const before = steps.find((step) => step.startsWith('Step 3')) ?? '';
    assert.match(before, /lead\.jsonl \(lead\)\s+lead\s+Report\s+revivable\s+waiting on 1 child/);
    assert.match(
      before,
      /writer-\S+\s+writer\s+Coming back honestly\s+revivable\s+1 call in flight/,
    );
    assert.match(before, /writer-\S+\s+writer\s+Why runs die\s+finished/);
    const revive = steps.find((step) => step.startsWith('Step 4')) ?? '';
    assert.match(
      revive,
      /answer write_file \S+ \(side-effect\) as interrupted, outcome unknown — NOT retried/,
    );
    assert.match(revive, /lead\s+finished\s+Done: report\.md holds both sections\./);
    const afterwards = steps.find((step) => step.startsWith('Step 6')) ?? '';
    assert.match(afterwards, /3 runs: 3 finished\./);
  });

  test('the transcripts: all finished; the interrupted call reached the model; it read before rewriting', async () => {
    const paths = await findTranscripts(['walkthrough'], folder);
    assert.equal(paths.length, 3);
    let stories = 0;
    for (const path of paths) {
      const inspection = await Revival.inspect({ path, maxRevivals: 3 });
      assert.equal(inspection.reason, 'finished', path);
      const read = await peek(path);
      assert.ok(read.ok);
      const view = conversationView(read.records);
      const interruptedAt = view.findIndex((message) =>
        message.content.some(
          (part) =>
            part.type === 'tool-result' && part.isError && part.output === INTERRUPTED_MESSAGE,
        ),
      );
      if (interruptedAt < 0) continue;
      stories += 1;
      const interruptedCall = view[interruptedAt]?.content.find(
        (part) => part.type === 'tool-result',
      );
      assert.equal(
        interruptedCall?.type === 'tool-result' ? interruptedCall.toolName : '',
        'write_file',
      );
      const callsAfter = view
        .slice(interruptedAt + 1)
        .flatMap((message) => message.content)
        .flatMap((part) => (part.type === 'tool-call' ? [part.toolName] : []));
      assert.deepEqual(callsAfter, ['read_file', 'write_file']);
      // What the model read is what the killed process left: half of the file.
      const check = view
        .slice(interruptedAt + 1)
        .flatMap((message) => message.content)
        .find((part) => part.type === 'tool-result' && part.toolName === 'read_file');
      const seen = check?.type === 'tool-result' ? (check.output as { bytes: number }).bytes : -1;
      const whole = Buffer.byteLength(sectionContent('Coming back honestly'));
      assert.ok(seen > 0 && seen < whole, `read ${seen} of ${whole} bytes`);
      const settled = read.records.filter(
        (record) =>
          record.type === 'tool-settled' &&
          interruptedCall?.type === 'tool-result' &&
          record.callId === interruptedCall.callId,
      );
      assert.deepEqual(
        settled.map((record) =>
          record.type === 'tool-settled' ? [record.status, record.reason] : [],
        ),
        [['failed', 'interrupted']],
      );
    }
    assert.equal(stories, 1, 'exactly one call was interrupted: the halted write');
    for (const section of DEMO_SECTIONS) {
      const content = await readFile(
        join(folder, 'walkthrough', 'workspace', section.file),
        'utf8',
      );
      assert.equal(content, sectionContent(section.title));
    }
  });
});

/** A run as `status --json` prints it: the fields these tests read. */
interface StatusRun {
  agentId: string;
  agentType: string;
  label: string;
  state: string;
  openDispatches: { callId: string; toolName: string }[];
  pendingJoins: { callId: string; agentIds: string[] }[];
  revivalsUsed: number;
  children: StatusRun[];
}

describe('llm-agent demo --stop-after-crash', () => {
  let folder = '';
  let demo: CliResult;
  const crashed = (...names: string[]): string => join(folder, 'crashed', ...names);
  before(async () => {
    folder = await temporaryFolder();
    demo = await runCli(['demo', 'crashed', '--stop-after-crash'], { cwd: folder });
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('kills the run mid-write, checks what it claimed so far, and stops, saying how to revive', () => {
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    assert.match(demo.stdout, /child pid \d+ exit signal: SIGKILL \(exit code none\)/);
    assert.match(demo.stdout, /✓ status found revivable runs/);
    assert.match(demo.stdout, /All 4 checks held\./);
    assert.doesNotMatch(demo.stdout, /✗/);
    assert.doesNotMatch(demo.stdout, /Step 4|Revived runs/);
    assert.match(demo.stdout, /nothing was revived, the crashed tree is left in crashed\./);
    assert.match(demo.stdout, /^ {2}llm-agent ui crashed +a web page/m);
    assert.match(demo.stdout, /^ {2}llm-agent revive crashed\/lead\.jsonl --yes +the same/m);
  });

  test('the folder holds a revivable tree: status --json sees the lead waiting and the writer’s write_file in flight', async () => {
    const status = await runCli(['status', 'crashed', '--json'], { cwd: folder });
    assert.equal(status.code, 3, `status exit code 3 means revivable runs exist\n${status.stderr}`);
    const parsed = JSON.parse(status.stdout) as {
      runs: StatusRun[];
      summary: { total: number; revivable: number; finished: number };
    };
    assert.deepEqual(
      [parsed.summary.total, parsed.summary.revivable, parsed.summary.finished],
      [3, 2, 1],
    );
    assert.equal(parsed.runs.length, 1);
    const lead = parsed.runs[0] as StatusRun;
    assert.deepEqual([lead.agentId, lead.state, lead.revivalsUsed], ['lead', 'revivable', 0]);
    const interrupted = lead.children.find((child) => child.label === 'Coming back honestly');
    const finished = lead.children.find((child) => child.label === 'Why runs die');
    assert.ok(interrupted && finished, JSON.stringify(lead.children));
    assert.equal(interrupted.state, 'revivable');
    assert.equal(interrupted.revivalsUsed, 0);
    assert.deepEqual(
      interrupted.openDispatches.map((call) => call.toolName),
      ['write_file'],
    );
    assert.equal(finished.state, 'finished');
    // The lead is inside its task_wait for the interrupted writer.
    assert.deepEqual(
      lead.pendingJoins.map((join) => join.agentIds),
      [[interrupted.agentId]],
    );
  });

  test('nothing was revived: section-2.md is half-written, no report, no run-revived record, the write never settled', async () => {
    const half = await readFile(crashed('workspace', 'section-2.md'));
    const whole = Buffer.from(sectionContent('Coming back honestly'));
    assert.ok(half.length > 0 && half.length < whole.length, `${half.length} of ${whole.length}`);
    assert.ok(whole.subarray(0, half.length).equals(half), 'the first half of the section');
    await assert.rejects(readFile(crashed('workspace', DEMO_REPORT)), { code: 'ENOENT' });
    const paths = await findTranscripts(['crashed'], folder);
    assert.equal(paths.length, 3);
    let inFlight = 0;
    for (const path of paths) {
      const read = await peek(path);
      assert.ok(read.ok, path);
      assert.deepEqual(
        read.records.filter((record) => record.type === 'run-revived'),
        [],
        `${path} was not revived`,
      );
      const parts = conversationView(read.records).flatMap((message) => message.content);
      const call = parts.find(
        (part) =>
          part.type === 'tool-call' &&
          part.toolName === 'write_file' &&
          (part.input as { path?: unknown }).path === 'section-2.md',
      );
      if (call?.type !== 'tool-call') continue;
      inFlight += 1;
      const ofCall = (type: string): number =>
        read.records.filter(
          (record) =>
            record.type === type && (record as { callId?: unknown }).callId === call.callId,
        ).length;
      assert.equal(ofCall('tool-dispatched'), 1, 'the write was handed to the tool');
      assert.equal(ofCall('tool-settled'), 0, 'and never settled');
      const answered = parts.some(
        (part) => part.type === 'tool-result' && part.callId === call.callId,
      );
      assert.equal(answered, false, 'and has no result');
    }
    assert.equal(inFlight, 1, 'one transcript holds the write of section-2.md');
  });

  test('then llm-agent revive DIR/lead.jsonl --yes (no --agents) finishes the tree', async () => {
    const revive = await runCli(['revive', join('crashed', 'lead.jsonl'), '--yes'], {
      cwd: folder,
    });
    assert.equal(revive.code, 0, `${revive.stdout}\n${revive.stderr}`);
    assert.match(
      revive.stdout,
      /answer write_file \S+ \(side-effect\) as interrupted, outcome unknown — NOT retried/,
    );
    assert.match(revive.stdout, /lead\s+finished\s+Done: report\.md holds both sections\./);
    const status = await runCli(['status', 'crashed', '--json'], { cwd: folder });
    assert.equal(status.code, 0, status.stderr);
    const parsed = JSON.parse(status.stdout) as { summary: { total: number; finished: number } };
    assert.deepEqual([parsed.summary.total, parsed.summary.finished], [3, 3]);
    const report = await readFile(crashed('workspace', DEMO_REPORT), 'utf8');
    for (const section of DEMO_SECTIONS) {
      const content = sectionContent(section.title);
      assert.equal(await readFile(crashed('workspace', section.file), 'utf8'), content);
      assert.ok(report.includes(content), `${DEMO_REPORT} holds ${section.file}`);
    }
  });
});
