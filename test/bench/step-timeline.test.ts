import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StepClock, stepDurations, summariseTimeline } from '../../bench/step-timeline.ts';

test('a step lasts from its model call to the next one', () => {
  assert.deepEqual(stepDurations([0, 2, 5, 11]), [2, 3, 6]);
  assert.deepEqual(stepDurations([7]), []);
});

test('cost per step at N is the mean over steps N/2+1..N, and the curve covers every step once', () => {
  const clock = new StepClock();
  // Step k takes k milliseconds: marks are triangular numbers.
  let at = 0;
  for (let step = 1; step <= 101; step += 1) {
    (clock.marks as number[])[step - 1] = at;
    at += step;
  }
  const summary = summariseTimeline(clock, [10, 100]);
  assert.equal(summary.msPerStepAt['10'], (6 + 7 + 8 + 9 + 10) / 5);
  assert.equal(summary.msPerStepAt['100'], (51 + 100) / 2);
  let next = 1;
  for (const point of summary.curve) {
    assert.equal(point.from, next);
    assert.ok(point.to >= point.from);
    next = point.to + 1;
  }
  assert.equal(next, 101);
});

test('time spent measuring is paused out of the marks and the total', async () => {
  let now = 0;
  const clock = new StepClock(() => now);
  clock.start();
  now = 5;
  clock.mark(1);
  await clock.pause(() => {
    now += 30;
  });
  now += 2;
  clock.mark(2);
  now += 1;
  clock.stop();
  assert.deepEqual(clock.marks, [5, 7]);
  assert.equal(clock.totalMs, 8);
});
