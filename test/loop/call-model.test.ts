import assert from 'node:assert/strict';
import { test } from 'node:test';
import type {
  LanguageModelV3StreamPart,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { APICallError, customProvider, type LanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { callModel, type ModelTurnRequest } from '../../src/loop/call-model.ts';
import type { LoopEvent } from '../../src/loop/types.ts';
import { latch } from '../support/latch.ts';
import { mockUsage } from '../support/mock-usage.ts';

/*
 * callModel's edge cases, each with a backend that misbehaves in one precise way: a call or a
 * stream that never ends and ignores its abort signal, a stream cut before its finish, an error
 * part mid-stream, a model of another specification. Each test checks that the fault really
 * happened (the backend was called, the part was pulled, the stream was cancelled), not only
 * what callModel returned.
 */

const prompt: LanguageModelV4Prompt = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
];

const finish: LanguageModelV4StreamPart = {
  type: 'finish',
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: mockUsage(7, 3),
};

/** A whole answer: stream-start, the text in deltas, finish. */
function answer(...deltas: string[]): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    ...deltas.map((delta): LanguageModelV4StreamPart => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    finish,
  ];
}

function answering(text: string): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => ({ stream: convertArrayToReadableStream(answer(text)) }),
  });
}

/** A request for `backends` with no waiting; the events it emitted are in `events`. */
function requestFor(
  backends: LanguageModel[],
  overrides: Partial<ModelTurnRequest> = {},
): { request: ModelTurnRequest; events: LoopEvent[]; slept: number[] } {
  const events: LoopEvent[] = [];
  const slept: number[] = [];
  const request: ModelTurnRequest = {
    backends,
    prompt,
    tools: [],
    signal: new AbortController().signal,
    rounds: 1,
    sleep: async (milliseconds) => {
      slept.push(milliseconds);
    },
    backoff: () => 0,
    maxRetryDelay: 60_000,
    now: () => Date.parse('2026-01-01T09:00:00.000Z'),
    emit: (event) => events.push(event),
    ...overrides,
  };
  return { request, events, slept };
}

function modelErrors(events: readonly LoopEvent[]) {
  return events.flatMap((event) => (event.type === 'model-error' ? [event] : []));
}

function textOf(turn: Awaited<ReturnType<typeof callModel>>): string {
  assert.ok(turn.ok, `the turn failed: ${turn.ok ? '' : turn.detail}`);
  return turn.message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * These backends never end by themselves: should callModel wait on them after all, the test
 * fails at this deadline instead of hanging the suite. Not a timing assertion: a working
 * callModel ends these turns long before it.
 */
const hangGuard = { timeout: 10_000 };

/** A model whose doStream never settles and never looks at its abort signal. */
function hangingCall(): {
  model: MockLanguageModelV4;
  called: Promise<void>;
  signals: AbortSignal[];
} {
  const { promise: called, release } = latch();
  const signals: AbortSignal[] = [];
  const model = new MockLanguageModelV4({
    doStream: (options) => {
      if (options.abortSignal !== undefined) signals.push(options.abortSignal);
      release();
      return new Promise(() => undefined);
    },
  });
  return { model, called, signals };
}

test(
  'a doStream that never settles and ignores abort: aborting the run ends the turn',
  hangGuard,
  async () => {
    const { model, called, signals } = hangingCall();
    const controller = new AbortController();
    const { request, events } = requestFor([model], { signal: controller.signal, rounds: 2 });
    const turn = callModel(request);
    await called;
    controller.abort();
    const result = await turn;
    assert.equal(model.doStreamCalls.length, 1, 'the hanging call was made');
    assert.equal(signals[0]?.aborted, true, 'the model was told to stop (and ignored it)');
    assert.deepEqual(result, {
      ok: false,
      reason: 'aborted',
      detail: 'the run was aborted',
      attempts: 1,
    });
    assert.deepEqual(modelErrors(events), [], 'an abort is not a model error');
  },
);

test(
  'a doStream that never settles: idleTimeout gives up on it and the next backend answers',
  hangGuard,
  async () => {
    const { model, signals } = hangingCall();
    const second = answering('from the second');
    const { request, events } = requestFor([model, second], { idleTimeout: 50 });
    const result = await callModel(request);
    assert.equal(model.doStreamCalls.length, 1);
    assert.equal(signals[0]?.aborted, true, 'the silent call was aborted');
    const errors = modelErrors(events);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.backend, 0);
    assert.equal(errors[0]?.willRetry, true);
    assert.match(errors[0]?.message ?? '', /ModelTimeoutError/);
    assert.equal(textOf(result), 'from the second');
    assert.equal(result.ok && result.backend, 1);
  },
);

test(
  'a stream that sends stream-start then nothing, ignoring abort: idleTimeout fails over',
  hangGuard,
  async () => {
    let cancelled = 0;
    const silent = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] });
          },
          // Neither pull nor cancel ever produce or finish anything.
          cancel() {
            cancelled += 1;
            return new Promise(() => undefined);
          },
        }),
      }),
    });
    const second = answering('awake');
    const { request, events } = requestFor([silent, second], { idleTimeout: 50 });
    const result = await callModel(request);
    assert.equal(silent.doStreamCalls.length, 1);
    assert.ok(cancelled >= 1, 'the silent stream was cancelled');
    const errors = modelErrors(events);
    assert.equal(errors.length, 1);
    assert.match(errors[0]?.message ?? '', /ModelTimeoutError/);
    assert.equal(errors[0]?.willRetry, true);
    assert.equal(textOf(result), 'awake');
  },
);

test(
  'a stream that arrives after the turn gave up on its call is cancelled',
  hangGuard,
  async () => {
    let cancelled = 0;
    let deliver: () => void = () => undefined;
    const late = new MockLanguageModelV4({
      doStream: () =>
        new Promise((resolve) => {
          deliver = () =>
            resolve({
              stream: new ReadableStream<LanguageModelV4StreamPart>({
                cancel() {
                  cancelled += 1;
                },
              }),
            });
        }),
    });
    const second = answering('on time');
    const { request } = requestFor([late, second], { idleTimeout: 50 });
    const result = await callModel(request);
    assert.equal(textOf(result), 'on time');
    assert.equal(cancelled, 0, 'nothing to cancel before the stream exists');
    deliver();
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(cancelled, 1, 'the late stream was cancelled as soon as it arrived');
  },
);

test('a stream that ends without its finish part: the next backend is tried', async () => {
  const cut = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream<LanguageModelV4StreamPart>(
        answer('half an ans').slice(0, -2),
      ),
    }),
  });
  const second = answering('a whole answer');
  const { request, events } = requestFor([cut, second]);
  const result = await callModel(request);
  assert.equal(cut.doStreamCalls.length, 1);
  const errors = modelErrors(events);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.backend, 0);
  assert.equal(errors[0]?.willRetry, true);
  assert.match(errors[0]?.message ?? '', /IncompleteStreamError/);
  assert.equal(textOf(result), 'a whole answer');
  assert.equal(result.ok && result.backend, 1);
  // The cut stream's text was streamed before the failure (a display drops it on willRetry).
  const deltas = events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : []));
  assert.deepEqual(deltas, ['half an ans', 'a whole answer']);
});

test("stream-start's warnings become model-warning events", async () => {
  const warned = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
        {
          type: 'stream-start',
          warnings: [
            { type: 'unsupported', feature: 'temperature', details: 'reasoning model' },
            { type: 'other', message: 'tools were ignored' },
          ],
        },
        ...answer('ok').slice(1),
      ]),
    }),
  });
  const { request, events } = requestFor([warned]);
  const result = await callModel(request);
  assert.equal(textOf(result), 'ok');
  assert.deepEqual(
    events.filter((event) => event.type === 'model-warning'),
    [
      { type: 'model-warning', message: 'unsupported: temperature (reasoning model)' },
      { type: 'model-warning', message: 'other: tools were ignored' },
    ],
  );
});

test('a v3 model answers through the v4 adapter, with the prompt it was given', async () => {
  const parts: LanguageModelV3StreamPart[] = answer('from v3') as LanguageModelV3StreamPart[];
  const legacy = new MockLanguageModelV3({
    doStream: async () => ({ stream: convertArrayToReadableStream(parts) }),
  });
  const { request, events } = requestFor([legacy]);
  const result = await callModel(request);
  assert.equal(legacy.doStreamCalls.length, 1, 'the v3 model itself was called');
  assert.deepEqual(legacy.doStreamCalls[0]?.prompt, prompt);
  assert.equal(textOf(result), 'from v3');
  assert.deepEqual(result.ok && result.usage, { inputTokens: 7, outputTokens: 3 });
  assert.deepEqual(modelErrors(events), []);
});

test('a string backend is resolved through globalThis.AI_SDK_DEFAULT_PROVIDER', async () => {
  const model = answering('by name');
  const saved = globalThis.AI_SDK_DEFAULT_PROVIDER;
  globalThis.AI_SDK_DEFAULT_PROVIDER = customProvider({ languageModels: { scripted: model } });
  try {
    const { request } = requestFor(['scripted']);
    const result = await callModel(request);
    assert.equal(model.doStreamCalls.length, 1, 'the named model was called');
    assert.equal(textOf(result), 'by name');
  } finally {
    globalThis.AI_SDK_DEFAULT_PROVIDER = saved;
  }
});

test('a model of an unknown specification is refused without a throw; the next backend answers', async () => {
  const future = {
    specificationVersion: 'v9',
    provider: 'future',
    modelId: 'm9',
  } as unknown as LanguageModel;
  const second = answering('from the second');
  const { request, events } = requestFor([future, second], { rounds: 2 });
  const result = await callModel(request);
  assert.equal(textOf(result), 'from the second');
  assert.equal(result.ok && result.backend, 1);
  const errors = modelErrors(events);
  assert.equal(errors.length, 1);
  assert.match(errors[0]?.message ?? '', /UnsupportedModelVersionError/);
  assert.equal(errors[0]?.willRetry, true);
});

test('when every backend refuses, the turn fails at once: each asked once, no backoff, no second round', async () => {
  const future = {
    specificationVersion: 'v9',
    provider: 'future',
    modelId: 'm9',
  } as unknown as LanguageModel;
  const refusing = failingMidStream({
    type: 'invalid_request_error',
    message: 'prompt is too long',
  });
  const { request, events, slept } = requestFor([future, refusing], { rounds: 3 });
  const result = await callModel(request);
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.reason, 'failed');
  assert.equal(!result.ok && result.attempts, 2);
  assert.match(
    !result.ok ? result.detail : '',
    /^every backend refused the request; last: backend 2 of 2: .*prompt is too long/,
  );
  assert.equal(refusing.doStreamCalls.length, 1);
  assert.deepEqual(slept, []);
  assert.deepEqual(
    modelErrors(events).map((event) => [event.backend, event.willRetry]),
    [
      [0, true],
      [1, false],
    ],
  );
});

test('a backend that refused is not asked again in a later round; the others are', async () => {
  const refusing = failingMidStream({ type: 'invalid_request_error', message: 'no such item' });
  const busy = new MockLanguageModelV4({
    doStream: async () => {
      throw new APICallError({
        message: 'busy',
        url: 'http://127.0.0.1/',
        requestBodyValues: {},
        statusCode: 503,
      });
    },
  });
  const { request, slept } = requestFor([refusing, busy], {
    rounds: 3,
    backoff: (round) => round * 10,
  });
  const result = await callModel(request);
  assert.equal(result.ok, false);
  assert.equal(
    !result.ok && result.attempts,
    4,
    'the refusing backend once, the busy one three times',
  );
  assert.equal(refusing.doStreamCalls.length, 1);
  assert.equal(busy.doStreamCalls.length, 3);
  assert.deepEqual(slept, [10, 20]);
  assert.match(
    !result.ok ? result.detail : '',
    /^every backend failed after 4 attempts; last: backend 2 of 2: HTTP 503/,
  );
});

/** A model whose stream opens a text, then carries `error` as an error part. */
function failingMidStream(error: unknown): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Sta' },
        { type: 'error', error },
        finish,
      ]),
    }),
  });
}

test('an overloaded_error part mid-stream: the next backend is tried', async () => {
  const first = failingMidStream({ type: 'overloaded_error', message: 'Overloaded' });
  const second = answering('steady');
  const { request, events } = requestFor([first, second]);
  const result = await callModel(request);
  assert.equal(first.doStreamCalls.length, 1);
  const errors = modelErrors(events);
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.willRetry, true);
  assert.match(errors[0]?.message ?? '', /Overloaded/);
  assert.equal(textOf(result), 'steady');
});

test('an invalid_request_error part mid-stream is a refusal: the next backend is asked, the first never again', async () => {
  const first = failingMidStream({ type: 'invalid_request_error', message: 'prompt is too long' });
  const second = answering('taken');
  const { request, events, slept } = requestFor([first, second], { rounds: 2 });
  const result = await callModel(request);
  assert.equal(textOf(result), 'taken');
  assert.equal(first.doStreamCalls.length, 1);
  assert.deepEqual(slept, []);
  assert.match(modelErrors(events)[0]?.message ?? '', /prompt is too long/);
});

test('an invalid_request_error part with one backend fails the turn after one attempt, no backoff', async () => {
  const only = failingMidStream({ type: 'invalid_request_error', message: 'prompt is too long' });
  const { request, events, slept } = requestFor([only], { rounds: 2 });
  const result = await callModel(request);
  assert.equal(only.doStreamCalls.length, 1);
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.reason, 'failed');
  assert.equal(!result.ok && result.attempts, 1);
  assert.match(!result.ok ? result.detail : '', /^backend 1 of 1: .*prompt is too long/);
  assert.deepEqual(slept, []);
  assert.equal(modelErrors(events)[0]?.willRetry, false);
});

test('after an error part the stream is cancelled, not read to its end', async () => {
  const total = 1000;
  let pulled = 0;
  let cancelled = 0;
  const part = (index: number): LanguageModelV4StreamPart => {
    if (index === 0) return { type: 'stream-start', warnings: [] };
    if (index === 1) return { type: 'text-start', id: 't' };
    if (index === 3) return { type: 'error', error: { type: 'api_error', message: 'boom' } };
    if (index === total - 1) return finish;
    return { type: 'text-delta', id: 't', delta: `${index} ` };
  };
  const endless = new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        pull(controller) {
          controller.enqueue(part(pulled));
          pulled += 1;
          if (pulled === total) controller.close();
        },
        cancel() {
          cancelled += 1;
        },
      }),
    }),
  });
  const { request, events } = requestFor([endless]);
  const result = await callModel(request);
  assert.equal(cancelled, 1, 'the stream was cancelled');
  assert.ok(pulled > 3, `the error part was pulled (${pulled} parts)`);
  assert.ok(pulled < total, `not every part was pulled (${pulled} of ${total})`);
  assert.equal(result.ok, false);
  assert.match(!result.ok ? result.detail : '', /boom/);
  // Nothing after the error reached the display.
  const deltas = events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : []));
  assert.deepEqual(deltas, ['2 ']);
});

test('text deltas are emitted in order, empty ones not at all', async () => {
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
        { type: 'stream-start', warnings: [] },
        { type: 'reasoning-start', id: 'r' },
        { type: 'reasoning-delta', id: 'r', delta: 'thinking' },
        { type: 'reasoning-end', id: 'r' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: '' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        { type: 'text-delta', id: 't', delta: '' },
        { type: 'text-delta', id: 't', delta: 'lo' },
        { type: 'text-delta', id: 't', delta: ', world' },
        { type: 'text-end', id: 't' },
        finish,
      ]),
    }),
  });
  const { request, events } = requestFor([model]);
  const result = await callModel(request);
  assert.deepEqual(
    events.filter((event) => event.type === 'text-delta'),
    [
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'text-delta', text: ', world' },
    ],
  );
  assert.equal(textOf(result), 'Hello, world');
});

/** A stream whose source's cancel never settles: a backend that will not be stopped. */
function stubbornStream(parts: LanguageModelV4StreamPart[]): {
  stream: ReadableStream<LanguageModelV4StreamPart>;
  cancels: () => number;
} {
  let cancelled = 0;
  const stream = new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
    },
    cancel() {
      cancelled += 1;
      return new Promise(() => undefined);
    },
  });
  return { stream, cancels: () => cancelled };
}

test(
  'after an error part, a stream whose cancel never settles does not hold the turn',
  hangGuard,
  async () => {
    const stubborn = stubbornStream([
      { type: 'stream-start', warnings: [] },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ]);
    const first = new MockLanguageModelV4({ doStream: async () => ({ stream: stubborn.stream }) });
    const second = answering('steady');
    const { request, events } = requestFor([first, second]);
    const result = await callModel(request);
    assert.equal(stubborn.cancels(), 1, 'the stream was cancelled (and never confirmed it)');
    assert.match(modelErrors(events)[0]?.message ?? '', /Overloaded/);
    assert.equal(textOf(result), 'steady');
  },
);

test(
  'a run aborted while doStream returns, the stream refusing to cancel: aborted',
  hangGuard,
  async () => {
    const run = new AbortController();
    const stubborn = stubbornStream(answer('too late'));
    const model = new MockLanguageModelV4();
    let calls = 0;
    // Not async: the call's promise is settled before callModel waits on it, so the stream wins
    // the race against the abort that landed while the call was being made.
    model.doStream = () => {
      calls += 1;
      run.abort();
      return Promise.resolve({ stream: stubborn.stream });
    };
    const { request, events } = requestFor([model], { signal: run.signal });
    const result = await callModel(request);
    assert.equal(calls, 1);
    assert.equal(stubborn.cancels(), 1, 'the stream was cancelled (and never confirmed it)');
    assert.deepEqual(result, {
      ok: false,
      reason: 'aborted',
      detail: 'the run was aborted',
      attempts: 1,
    });
    assert.deepEqual(
      events.filter((event) => event.type === 'text-delta'),
      [],
      'nothing of the aborted stream was shown',
    );
  },
);

/** A backend that always fails with an HTTP error of `status` and `headers`. */
function failingHttp(
  status: number,
  headers: Record<string, string> = {},
  name = 'failing',
): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: name,
    modelId: `${name}-model`,
    doStream: async () => {
      throw new APICallError({
        message: `status ${status}`,
        url: 'http://127.0.0.1/',
        requestBodyValues: {},
        statusCode: status,
        responseHeaders: headers,
      });
    },
  });
}

test('retry-after-ms and retry-after (seconds, HTTP date) make the wait before the next round longer, never shorter', async () => {
  const now = Date.parse('2026-01-01T09:00:00.000Z');
  const cases: [Record<string, string>, number][] = [
    [{ 'retry-after-ms': '2500' }, 2500],
    [{ 'Retry-After': '3' }, 3000],
    [{ 'retry-after': 'Thu, 01 Jan 2026 09:00:04 GMT' }, 4000],
    [{ 'retry-after': '0' }, 100],
    [{ 'retry-after': 'soon' }, 100],
  ];
  for (const [headers, expected] of cases) {
    const limited = failingHttp(429, headers);
    const { request, slept } = requestFor([limited], {
      rounds: 2,
      backoff: () => 100,
      now: () => now,
    });
    const result = await callModel(request);
    assert.equal(limited.doStreamCalls.length, 2, JSON.stringify(headers));
    assert.deepEqual(slept, [expected], JSON.stringify(headers));
    assert.ok(!result.ok && result.reason === 'failed');
    assert.equal(result.failure.cause, 'rate-limited');
  }
});

test('a backend asking to wait past maxRetryDelay is not asked again this turn: the turn fails at once, saying how long', async () => {
  const limited = failingHttp(429, { 'retry-after': '600' }, 'limited');
  const { request, slept } = requestFor([limited], { rounds: 3, maxRetryDelay: 60_000 });
  const result = await callModel(request);
  assert.equal(limited.doStreamCalls.length, 1);
  assert.deepEqual(slept, []);
  assert.ok(!result.ok && result.reason === 'failed');
  assert.deepEqual(result.failure, {
    cause: 'rate-limited',
    error: 'HTTP 429: status 429',
    backend: 1,
    model: 'limited:limited-model',
    retryAfterMs: 600_000,
  });
});

test('the cause of a failed turn: a status table, and a cause that may pass wins over a refusal', async () => {
  const cases: [MockLanguageModelV4[], string, number][] = [
    [[failingHttp(401)], 'auth', 1],
    [[failingHttp(403)], 'auth', 1],
    [[failingHttp(404)], 'refused', 1],
    [[failingHttp(400)], 'refused', 1],
    [[failingHttp(503)], 'outage', 1],
    [[failingHttp(408)], 'outage', 1],
    [[failingHttp(429)], 'rate-limited', 1],
    // Backend 2 is down, backend 1 refuses: wait the outage out, whatever came last.
    [[failingHttp(503), failingHttp(401)], 'outage', 1],
    [[failingHttp(401), failingHttp(503)], 'outage', 2],
  ];
  for (const [backends, cause, backend] of cases) {
    const { request } = requestFor(backends, { rounds: 2 });
    const result = await callModel(request);
    assert.ok(!result.ok && result.reason === 'failed');
    assert.equal(result.failure.cause, cause, JSON.stringify(result.failure));
    assert.equal(result.failure.backend, backend, JSON.stringify(result.failure));
  }
  const transport = new MockLanguageModelV4({
    doStream: async () => {
      throw new TypeError('fetch failed');
    },
  });
  const { request } = requestFor([transport]);
  const result = await callModel(request);
  assert.ok(!result.ok && result.reason === 'failed');
  assert.equal(result.failure.cause, 'outage');
  assert.match(result.failure.error, /fetch failed/);
});
