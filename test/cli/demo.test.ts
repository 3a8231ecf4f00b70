import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findTranscripts } from '../../src/cli/find-transcripts.ts';
import { DEMO_SECTIONS, sectionContent } from '../../src/demo/demo-script.ts';
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
