import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileTexts } from '../../src/render/file-texts.ts';
import { runTimeline, type TimelineStep } from '../../src/render/run-timeline.ts';
import { formatDuration, timelineHtml } from '../../src/render/timeline-html.ts';
import { peek } from '../../src/transcript/peek.ts';
import type { TranscriptRecord } from '../../src/transcript/records.ts';

const NORMAL = new URL('../fixtures/v1/normal.jsonl', import.meta.url).pathname;

async function normalRecords() {
  const peeked = await peek(NORMAL);
  assert.ok(peeked.ok);
  return peeked.records;
}

test('a run as steps: each turn and call with its duration and tokens, the revival marked with how long the run was down', async () => {
  const timeline = runTimeline(await normalRecords(), false);
  const steps = timeline.entries.filter((entry): entry is TimelineStep => entry.type === 'step');
  const model = steps.find((step) => step.kind === 'model' && step.seq === 3);
  // The turn took from the record before it (seq 2, 09:00:03) to its own (09:00:04).
  assert.equal(model?.durationMs, 1000);
  assert.ok((model?.tokens ?? 0) > 0);
  assert.equal(model?.tokensFrom, 'estimate');
  const read = steps.find((step) => step.callId === 'call-1');
  // From its dispatch (09:00:05) to its result (09:00:06).
  assert.deepEqual(
    [read?.kind, read?.label, read?.durationMs, read?.status],
    ['tool', 'read_file', 1000, 'completed'],
  );
  assert.equal(steps.find((step) => step.callId === 'call-2')?.status, 'failed');
  const interrupted = steps.find((step) => step.callId === 'call-3');
  // Answered by the revival: how long the tool ran is unknown, not the time until the revival.
  assert.deepEqual([interrupted?.status, interrupted?.durationMs], ['interrupted', undefined]);
  const revived = timeline.entries.find(
    (entry) => entry.type === 'mark' && entry.kind === 'revived',
  );
  // The last record before the death (seq 13, 09:00:15) to the revival (09:00:18).
  assert.equal(revived?.type === 'mark' ? revived.downMs : undefined, 3000);
  assert.equal(timeline.revivals, 1);
  assert.equal(timeline.spanMs, 22_000);
  assert.ok(timeline.estimated);
  assert.equal(
    timeline.tokens,
    steps.reduce((sum, step) => sum + step.tokens, 0),
  );
  assert.equal(
    timeline.entries.some((entry) => entry.type === 'mark' && entry.kind === 'died'),
    false,
  );
});

test('a run that died: its open call is in flight and the death is marked at the end, linked to where it stopped', () => {
  const records: TranscriptRecord[] = [
    {
      v: 1,
      seq: 1,
      at: '2026-01-01T09:00:00.000Z',
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'go' }],
    },
    {
      v: 1,
      seq: 2,
      at: '2026-01-01T09:00:02.500Z',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId: 'c1', toolName: '<b>write</b>', input: {} }],
      extras: { usage: { inputTokens: 900, outputTokens: 17 } },
    },
    {
      v: 1,
      seq: 3,
      at: '2026-01-01T09:00:03.000Z',
      type: 'tool-dispatched',
      callId: 'c1',
      toolName: '<b>write</b>',
      inputDigest: 'sha256:00',
      idempotency: 'side-effect',
    },
  ];
  const timeline = runTimeline(records, true);
  const last = timeline.entries.at(-1);
  assert.equal(last?.type === 'mark' ? last.kind : undefined, 'died');
  assert.match(last?.type === 'mark' ? last.text : '', /in flight: c1/);
  const model = timeline.entries.find((entry) => entry.type === 'step' && entry.kind === 'model');
  assert.deepEqual(
    model?.type === 'step' ? [model.tokens, model.tokensFrom, model.durationMs] : [],
    [17, 'provider', 2500],
  );
  const html = timelineHtml(timeline, {
    fromSeq: 0,
    toSeq: Number.POSITIVE_INFINITY,
    paged: false,
    anchor: 'run-4',
  });
  assert.match(html, /st-in-flight/);
  assert.match(html, /href="#run-4-stopped"/);
  assert.match(html, /href="#run-4-m2"/);
  assert.match(html, /&lt;b&gt;write&lt;\/b&gt;/, 'a tool name is text');
  assert.doesNotMatch(html, /<b>/);
  assert.match(html, /2\.5 s/);
});

test('a page of a paged run shows its own rows, numbered as in the whole run, and the run’s totals', async () => {
  const timeline = runTimeline(await normalRecords(), false);
  const html = timelineHtml(timeline, {
    fromSeq: 11,
    toSeq: Number.POSITIVE_INFINITY,
    paged: true,
    anchor: 'run-0',
  });
  assert.doesNotMatch(html, /href="#run-0-m3"/, 'an earlier page’s step is not a row');
  assert.match(html, /href="#run-0-m11"/);
  assert.match(html, /the rows below are this page’s|the rows below are this page's/);
  assert.match(html, new RegExp(`${timeline.steps} steps`));
  // Steps before seq 11: system, user, model (3), read_file, spawn_agent — so task_wait's turn is 6.
  assert.match(html, /<span class="n">6<\/span><a class="k" href="#run-0-m11">/);
});

test('durations for people', () => {
  assert.deepEqual([340, 4200, 42_000, 185_000, 7_380_000, 90_000_000].map(formatDuration), [
    '340 ms',
    '4.2 s',
    '42 s',
    '3 min 5 s',
    '2 h 3 min',
    '1 d 1 h',
  ]);
});

test('a tool value for what it is: a file’s contents as text, the rest as data; JSON text as data', () => {
  assert.deepEqual(fileTexts({ path: 'a.ts', content: 'x\ny' }), [
    { kind: 'json', value: { path: 'a.ts' } },
    { kind: 'lines', key: 'content', text: 'x\ny' },
  ]);
  assert.deepEqual(fileTexts('one\ntwo'), [{ kind: 'lines', text: 'one\ntwo' }]);
  assert.deepEqual(fileTexts('{"ok":true,"log":"a\\nb"}'), [
    { kind: 'json', value: { ok: true } },
    { kind: 'lines', key: 'log', text: 'a\nb' },
  ]);
  assert.deepEqual(fileTexts('{not json'), [{ kind: 'json', value: '{not json' }]);
  assert.deepEqual(fileTexts({ lines: 3 }), [{ kind: 'json', value: { lines: 3 } }]);
  assert.deepEqual(fileTexts(['a\nb']), [{ kind: 'json', value: ['a\nb'] }]);
});
