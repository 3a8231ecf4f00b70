import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BenchResults } from '../../bench/bench-results.ts';
import { judgeGoals, markdownReport } from '../../bench/report.ts';

function results(overrides: Partial<BenchResults>): BenchResults {
  return {
    formatVersion: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
    quick: false,
    commit: { id: 'abcdef0', dirty: false },
    machine: {
      cpuModel: 'cpu',
      cores: 2,
      memoryBytes: 1,
      freeMemoryBytes: 1,
      node: 'v24',
      os: 'linux',
      diskFileSystem: 'ext4',
      loadAverage: { start: 0, end: 0 },
    },
    goals: [],
    ...overrides,
  };
}

const GIB = 1024 * 1024 * 1024;

test('a goal with no figure is not measured, never met', () => {
  for (const goal of judgeGoals(results({}))) assert.equal(goal.met, null, goal.goal);
});

test('inspect is judged at 1 GiB and on its smallest ratio', () => {
  const inspect = {
    ok: true as const,
    source: 'test',
    sizes: [
      { bytes: 10e6, inspectMs: 1, fullParseMs: 50, ratio: 50 },
      { bytes: GIB, inspectMs: 4, fullParseMs: 4000, ratio: 1000 },
    ],
  };
  const goals = judgeGoals(results({ inspect }));
  assert.equal(goals[0]?.met, true);
  assert.equal(goals[1]?.met, false, 'a 50× ratio at 10 MB misses ≥ 100×');
});

test('a quick run judges nothing, whatever it measured', () => {
  const inspect = {
    ok: true as const,
    source: 'test',
    sizes: [{ bytes: GIB, inspectMs: 4, fullParseMs: 4000, ratio: 1000 }],
  };
  for (const goal of judgeGoals(results({ inspect, quick: true }))) assert.equal(goal.met, null);
});

test('the report says missed for a missed goal', () => {
  const run = results({
    inspect: {
      ok: true,
      source: 'test',
      sizes: [{ bytes: GIB, inspectMs: 40, fullParseMs: 4000, ratio: 100 }],
    },
  });
  run.goals = judgeGoals(run);
  assert.match(
    markdownReport(run),
    /inspect at 1\.00 GiB \| ≤ 10 ms \| 40\.0 ms \| \*\*missed\*\*/,
  );
});

test('status is judged with the index only when every run answered from it, and without it at 0.8 s', () => {
  const run = (fromIndex: number) => ({
    ms: 400,
    load1: 0.5,
    stats: {
      transcripts: 10_000,
      index: 'used' as const,
      indexEntries: 10_000,
      indexSaved: false,
      fromIndex,
      read: 10_000 - fromIndex,
      byHelpers: 0,
      helpers: 0,
      inspected: 0,
      ms: {},
    },
  });
  const status = (fromIndex: number) => ({
    count: 10_000,
    manifest: {} as never,
    generatedMs: 0,
    processMs: [400, 400, 400],
    processMedianMs: 400,
    processExitCode: 4,
    readAllMs: [790, 810, 820],
    readAllMedianMs: 810,
    processRuns: [run(10_000), run(fromIndex), run(10_000)],
    commandMs: [300],
    commandMedianMs: 300,
    statesReported: {},
    coldProcessMs: null,
  });
  const hit = judgeGoals(results({ status: status(10_000) }));
  const withIndex = hit.find((goal) => goal.goal.startsWith('2. status over'));
  assert.equal(withIndex?.met, true);
  assert.match(withIndex?.measured ?? '', /every answer from the index/);
  assert.equal(hit.find((goal) => goal.goal.includes('index off'))?.met, false, '810 ms > 0.8 s');
  const missed = judgeGoals(results({ status: status(9_000) }));
  const notJudged = missed.find((goal) => goal.goal.startsWith('2. status over'));
  assert.equal(notJudged?.met, null, 'a run that read transcripts is not the index’s figure');
  assert.match(notJudged?.measured ?? '', /not hit/);
});
