import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { Loop } from '../../src/loop/loop.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import { Revival } from '../../src/revival/index.ts';
import { RESUME_NOTICE } from '../../src/revival/texts.ts';
import { peek } from '../../src/transcript/peek.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { Session } from '../../src/transcript/session.ts';
import { startOutageChatServer } from '../../src/testing/index.ts';

/*
 * The outage a real run meets most: the provider answers 500 and 429 for longer than the loop's
 * retries. The run must end `failed` with a record of its own (no words in the model's mouth),
 * read as failed and revivable, and carry on to its end once the provider is back — over HTTP,
 * against a scripted OpenAI-compatible server that refuses any broken conversation with 400.
 */

interface ChatRequestMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string } }[];
}

/** Every assistant message the server was sent, as role + text + call ids. */
function assistantTurns(requests: readonly Record<string, unknown>[]): string[][] {
  return requests.map((body) =>
    ((body.messages ?? []) as ChatRequestMessage[])
      .filter((message) => message.role === 'assistant')
      .map((message) =>
        JSON.stringify({
          content: message.content ?? null,
          calls: (message.tool_calls ?? []).map((call) => call.id),
        }),
      ),
  );
}

test('a provider outage: the run fails honestly, reads failed, and revives to its end once the provider is back', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'llm-agent-outage-'));
  // Turn 1 answers with a call; then the provider goes down (the test takes it down once the
  // tool has run); after the recovery the model reads the result and finishes.
  const server = await startOutageChatServer(
    [
      { calls: [{ id: 'call_note', name: 'note', input: { text: 'draft' } }] },
      { text: 'The note is written.' },
    ],
    null,
  );
  const written: string[] = [];
  const note: ToolDefinition<{ text: string }> = {
    name: 'note',
    description: 'Writes a note',
    inputSchema: z.object({ text: z.string() }),
    idempotency: 'side-effect',
    execute: async ({ text }) => {
      written.push(text);
      // The provider goes down while the tool runs: the next model call meets the outage.
      server.outage = { status: 429, headers: { 'retry-after': '2' } };
      return 'noted';
    },
  };
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: server.url });
  const path = join(folder, 'main.jsonl');
  const slept: number[] = [];
  const sleep = async (milliseconds: number) => {
    slept.push(milliseconds);
    // The second round meets a 500 instead: the last error decides the cause.
    if (server.outage?.status === 429) server.outage = { status: 500, message: 'upstream down' };
  };
  try {
    const session = await Session.create(path, {
      agentId: 'main',
      agentType: 'writer',
      label: 'outage',
      model: 'scripted:m',
    });
    const first = new Loop({
      backends: [provider.chatModel('m')],
      writer: session,
      tools: [note],
      sleep,
      random: () => 0.5,
    });
    const failed = await first.start('Write a note.');
    await session.close();
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(failed.error ?? '', /every backend failed after 3 attempts; last: .*HTTP 500/);
    // Three rounds: waits of the jittered backoff, the first raised to the 429's retry-after.
    assert.equal(server.failures, 3, 'the outage really answered every retry');
    assert.deepEqual(slept, [2000, 1500]);

    const read = await peek(path);
    assert.ok(read.ok);
    const last = read.records
      .filter(isKnownRecord)
      .filter((record) => record.type !== 'checkpoint')
      .at(-1);
    assert.ok(last?.type === 'run-failed', JSON.stringify(last));
    assert.equal(last.cause, 'outage');
    assert.equal(last.attempts, 3);
    assert.equal(last.backend, 1);
    assert.match(last.model, /^scripted\.chat:m$/);
    assert.equal(
      read.records.filter((record) => record.type === 'message' && record.role === 'assistant')
        .length,
      1,
      'only the model turn the model wrote: no system-made assistant turn',
    );

    const found = await Revival.inspect({ path, maxRevivals: 2 });
    assert.equal(found.revivable, true, JSON.stringify(found));
    assert.equal(found.halt?.state, 'failed');
    assert.equal(found.halt?.cause, 'outage');
    assert.equal(found.halt?.detail, last.error);
    assert.equal(found.tail, 'results-unread');

    // The provider is back.
    server.outage = null;
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
    assert.ok(revived.ok, JSON.stringify(revived));
    try {
      const second = new Loop({
        backends: [provider.chatModel('m')],
        writer: revived.session,
        tools: [note],
        sleep,
      });
      const result = await second.run(revived.messages);
      assert.equal(result.status, 'finished', JSON.stringify(result));
      assert.equal(result.text, 'The note is written.');
    } finally {
      await revived.session.close();
    }
    assert.deepEqual(written, ['draft'], 'the side effect ran once');
    assert.deepEqual(server.rejections, [], 'no request broke the pairing rules');

    // The model never saw a turn it did not write: every assistant message in every request is
    // one the server itself sent, and the last request carries the resume notice.
    const sent = assistantTurns(server.requests);
    const own = JSON.stringify({ content: null, calls: ['call_note'] });
    const ownEmpty = JSON.stringify({ content: '', calls: ['call_note'] });
    for (const turns of sent) {
      for (const turn of turns) assert.ok(turn === own || turn === ownEmpty, turn);
    }
    const finalRequest = JSON.stringify(server.requests.at(-1));
    assert.ok(finalRequest.includes(JSON.stringify(RESUME_NOTICE).slice(1, 60)));
    assert.doesNotMatch(finalRequest, /The run failed/);

    const after = await Revival.inspect({ path, maxRevivals: 2 });
    assert.equal(after.revivable, false);
    assert.equal(after.reason, 'finished');
    assert.equal(after.revivalsUsed, 1, 'the revival counted against the cap');
    assert.equal(after.halt, undefined);
  } finally {
    await server.close();
    await rm(folder, { recursive: true, force: true });
  }
});
