import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APICallError, createProviderRegistry, customProvider } from 'ai';
import { classifyModelError } from '../../src/loop/call-model.ts';
import { Loop } from '../../src/loop/loop.ts';
import type { Session } from '../../src/transcript/session.ts';
import {
  collectEvents,
  freshSession,
  recordsOf,
  shapeOf,
  withFreshSession,
} from './support/harness.ts';
import { httpError, ScriptedModel } from '../../src/testing/index.ts';

function instantSleep() {
  const slept: number[] = [];
  return {
    slept,
    sleep: async (milliseconds: number) => {
      slept.push(milliseconds);
    },
  };
}

test('classifyModelError: transport, 5xx, 408 and 429 are retried; other statuses are not', () => {
  assert.equal(classifyModelError(httpError(500)), 'retry');
  assert.equal(classifyModelError(httpError(503)), 'retry');
  assert.equal(classifyModelError(httpError(429)), 'retry');
  assert.equal(classifyModelError(httpError(408)), 'retry');
  assert.equal(classifyModelError(httpError(400)), 'fatal');
  assert.equal(classifyModelError(httpError(401)), 'fatal');
  assert.equal(
    classifyModelError(
      new APICallError({ message: 'fetch failed', url: 'x', requestBodyValues: {} }),
    ),
    'retry',
  );
  assert.equal(classifyModelError(new TypeError('fetch failed')), 'retry');
  const controller = new AbortController();
  controller.abort();
  assert.equal(classifyModelError(httpError(500), controller.signal), 'aborted');
});

for (const failure of [
  { name: '5xx', step: { fail: 'http' as const, status: 503 } },
  { name: '429', step: { fail: 'http' as const, status: 429 } },
  { name: 'a network error', step: { fail: 'network' as const } },
  { name: 'an error mid-stream', step: { fail: 'mid-stream' as const, text: 'Hal', status: 502 } },
]) {
  test(`failover on ${failure.name}: the next backend answers, nothing half-written`, () =>
    withFreshSession(async (fixture) => {
      const first = new ScriptedModel([failure.step], 'first');
      const second = new ScriptedModel([{ text: 'Hello from the second.' }], 'second');
      const { sleep, slept } = instantSleep();
      const loop = new Loop({
        backends: [first.model, second.model],
        writer: fixture.session,
        sleep,
      });
      const run = loop.start('Hi');
      const events = await collectEvents(run);
      const result = await run;
      assert.equal(result.status, 'finished');
      assert.equal(result.text, 'Hello from the second.');
      assert.deepEqual(slept, [], 'switching backend does not wait');
      const errors = events.filter((event) => event.type === 'model-error');
      assert.equal(errors.length, 1);
      assert.ok(errors[0]?.type === 'model-error');
      assert.equal(errors[0].backend, 0);
      assert.equal(errors[0].willRetry, true);
      assert.deepEqual(shapeOf(await recordsOf(fixture.path)), [
        'session-meta',
        'user(text)',
        'assistant(text)',
      ]);
    }));
}

test('after a whole round fails the loop backs off, then tries the list again', () =>
  withFreshSession(async (fixture) => {
    const first = new ScriptedModel([{ fail: 'http', status: 500 }, { text: 'Back.' }], 'first');
    const second = new ScriptedModel([{ fail: 'http', status: 429 }], 'second');
    const { sleep, slept } = instantSleep();
    const loop = new Loop({
      backends: [first.model, second.model],
      writer: fixture.session,
      sleep,
      backoff: (attempt) => attempt * 1000,
    });
    const result = await loop.start('Hi');
    assert.equal(result.status, 'finished');
    assert.equal(result.text, 'Back.');
    assert.deepEqual(slept, [1000]);
  }));

test("when every backend fails the run ends failed, with a run-failed record and no words in the model's mouth", () =>
  withFreshSession(async (fixture) => {
    const first = new ScriptedModel([{ fail: 'http', status: 500 }, { fail: 'network' }], 'first');
    const second = new ScriptedModel(
      [
        { fail: 'http', status: 429 },
        { fail: 'http', status: 503 },
      ],
      'second',
    );
    const { sleep } = instantSleep();
    const loop = new Loop({
      backends: [first.model, second.model],
      writer: fixture.session,
      sleep,
      backendRounds: 2,
    });
    const run = loop.start('Hi');
    const events = await collectEvents(run);
    const result = await run;
    assert.equal(result.status, 'failed');
    assert.match(result.error ?? '', /every backend failed after 4 attempts/);
    assert.match(result.error ?? '', /HTTP 503/);
    const errors = events.filter((event) => event.type === 'model-error');
    assert.deepEqual(
      errors.map((event) => (event.type === 'model-error' ? event.willRetry : null)),
      [true, true, true, false],
    );
    const records = await recordsOf(fixture.path);
    const types = records.map((record) => record.type);
    assert.deepEqual(types.slice(0, 3), ['session-meta', 'message', 'run-failed']);
    assert.ok(types.slice(3).every((type) => type === 'checkpoint'));
    assert.equal(records.filter((record) => record.type === 'message').length, 1);
    const failed = records[2];
    assert.ok(failed?.type === 'run-failed');
    // The last error was the second backend's 503: an outage, likely to pass by itself.
    assert.equal(failed.cause, 'outage');
    assert.equal(failed.backend, 2);
    assert.equal(failed.model, 'second:second');
    assert.equal(failed.attempts, 4);
    assert.match(failed.error, /^HTTP 503/);
  }));

/**
 * A loop over two scripted backends with three rounds, recording every backoff it sleeps: a
 * refusal must never be waited on (a sleep that threw would be swallowed as the run's abort,
 * so the sleeps are counted instead).
 */
function refusalLoop(fixture: { session: Session }, first: ScriptedModel, second: ScriptedModel) {
  const slept: number[] = [];
  const loop = new Loop({
    backends: [first.model, second.model],
    writer: fixture.session,
    backendRounds: 3,
    sleep: async (milliseconds) => {
      slept.push(milliseconds);
    },
  });
  return { loop, slept };
}

test('a request one backend refuses (400) goes to the next backend, and never back to the first', () =>
  withFreshSession(async (fixture) => {
    const first = new ScriptedModel([{ fail: 'http', status: 400, message: 'bad request' }]);
    const second = new ScriptedModel([{ text: 'Taken.' }]);
    const { loop, slept } = refusalLoop(fixture, first, second);
    const result = await loop.start('Hi');
    assert.equal(result.status, 'finished', result.error);
    assert.equal(result.text, 'Taken.');
    assert.equal(first.prompts.length, 1);
    assert.equal(second.prompts.length, 1);
    assert.deepEqual(slept, [], 'a refusal is not waited on');
  }));

test('a request every backend refuses ends the run failed at once, naming the last refusal', () =>
  withFreshSession(async (fixture) => {
    const first = new ScriptedModel([{ fail: 'http', status: 401, message: 'bad key' }]);
    const second = new ScriptedModel([{ fail: 'http', status: 400, message: 'bad request' }]);
    const { loop, slept } = refusalLoop(fixture, first, second);
    const result = await loop.start('Hi');
    assert.equal(result.status, 'failed');
    assert.match(
      result.error ?? '',
      /every backend refused the request; last: backend 2 of 2: HTTP 400: bad request/,
    );
    assert.equal(first.prompts.length, 1);
    assert.equal(second.prompts.length, 1);
    assert.deepEqual(slept, [], 'a refusal is not waited on');
  }));

test('a run whose transcript cannot be written ends failed, never rejects', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([{ text: 'unwritten' }]);
    const loop = new Loop({ backends: [model.model], writer: fixture.session });
    await fixture.session.close();
    const result = await loop.run([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }], seq: 1 },
    ]);
    assert.equal(result.status, 'failed');
    assert.match(result.error ?? '', /could not be written|closed/);
  }));

test('a throwing hook (takeDeliveries) ends the run failed with the reason, never a rejection', () =>
  withFreshSession(async (fixture) => {
    const model = new ScriptedModel([{ text: 'never asked' }]);
    const loop = new Loop({
      backends: [model.model],
      writer: fixture.session,
      takeDeliveries: () => {
        throw new Error('delivery queue broke');
      },
    });
    const result = await loop.start('Hi');
    assert.equal(result.status, 'failed');
    assert.match(result.error ?? '', /unexpected error: delivery queue broke/);
    assert.equal(model.prompts.length, 0);
  }));

test('string backends are resolved through the provider (an AI SDK registry), in order', () =>
  withFreshSession(async (fixture) => {
    const down = new ScriptedModel([{ fail: 'http', status: 503 }], 'down');
    const up = new ScriptedModel([{ text: 'Resolved.' }], 'up');
    const registry = createProviderRegistry({
      test: customProvider({ languageModels: { down: down.model, up: up.model } }),
    });
    const loop = new Loop({
      backends: ['test:down', 'test:up'],
      provider: registry,
      writer: fixture.session,
    });
    const result = await loop.start('Hi');
    assert.equal(result.text, 'Resolved.');
    assert.equal(down.prompts.length, 1);
    assert.throws(
      () => new Loop({ backends: ['nope:model'], provider: registry, writer: fixture.session }),
      /cannot resolve the backend "nope:model"/,
    );
  }));

test('a backend that goes silent past modelIdleTimeout counts as a transport failure', () =>
  withFreshSession(async (fixture) => {
    const silent = new ScriptedModel([{ hang: true }], 'silent');
    const up = new ScriptedModel([{ text: 'Here.' }], 'up');
    const loop = new Loop({
      backends: [silent.model, up.model],
      writer: fixture.session,
      modelIdleTimeout: 50,
    });
    const run = loop.start('Hi');
    const events = await collectEvents(run);
    const result = await run;
    assert.equal(result.status, 'finished');
    assert.equal(result.text, 'Here.');
    const error = events.find((event) => event.type === 'model-error');
    assert.ok(error?.type === 'model-error');
    assert.match(error.message, /ModelTimeoutError: the backend sent nothing for 50 ms/);
    assert.equal(silent.prompts.length, 1);
  }));

test('the default backoff has equal jitter: half of each wait fixed, half from the injected randomness', async () => {
  const waits = async (random: number): Promise<number[]> => {
    const slept: number[] = [];
    const model = new ScriptedModel(
      [
        { fail: 'http', status: 503 },
        { fail: 'http', status: 503 },
        { fail: 'http', status: 503 },
      ],
      'busy',
    );
    const fixture = await freshSession();
    try {
      const result = await new Loop({
        backends: [model.model],
        writer: fixture.session,
        sleep: async (milliseconds) => {
          slept.push(milliseconds);
        },
        random: () => random,
      }).start('Hi');
      assert.equal(result.status, 'failed');
      assert.equal(model.remaining, 0, 'three rounds by default');
    } finally {
      await fixture.close();
    }
    return slept;
  };
  assert.deepEqual(await waits(0), [500, 1000]);
  assert.deepEqual(await waits(0.5), [750, 1500]);
  assert.deepEqual(await waits(0.999), [1000, 1999]);
});
