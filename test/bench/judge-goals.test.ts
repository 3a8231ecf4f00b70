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
