import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import { Loop } from '../../src/loop/loop.ts';
import { conversationView } from '../../src/transcript/conversation-view.ts';
import { pairingViolations } from '../../src/transcript/pairing-violations.ts';
import { echoTool, freshSession, type LogEntry, recordsOf } from '../loop/support/harness.ts';

/*
 * A smoke test against a real provider: one run that must call a tool and then answer. It is
 * not part of `npm test` (which is offline): `npm run test:live` runs it, with a key in the
 * environment (ANTHROPIC_API_KEY or OPENAI_API_KEY; the model can be chosen with
 * LLM_AGENT_LIVE_MODEL). Without a key it fails, naming what is missing — it never skips.
 */

function liveBackend(): { model: LanguageModel; name: string } | string {
  const chosen = process.env.LLM_AGENT_LIVE_MODEL;
  if (process.env.ANTHROPIC_API_KEY) {
    const id = chosen ?? 'claude-haiku-4-5';
    return { model: createAnthropic()(id), name: `anthropic:${id}` };
  }
  if (process.env.OPENAI_API_KEY) {
    const id = chosen ?? 'gpt-5-mini';
    return { model: createOpenAI()(id), name: `openai:${id}` };
  }
  return 'no ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment';
}

test('live provider: a run calls a tool, reads its result, and answers', async (t) => {
  const backend = liveBackend();
  if (typeof backend === 'string') assert.fail(`npm run test:live needs a key: ${backend}`);
  t.diagnostic(`model ${backend.name}`);
  const log: LogEntry[] = [];
  const fixture = await freshSession();
  try {
    const loop = new Loop({
      backends: [backend.model],
      writer: fixture.session,
      tools: [echoTool(log)],
      system: 'You are a test harness. Follow the instructions exactly.',
      maxTurns: 4,
    });
    const result = await loop.start(
      'Call the echo tool once with the text "pelican", then reply with exactly what it returned.',
    );
    assert.equal(result.status, 'finished', result.error);
    assert.ok(
      log.some((entry) => entry.kind === 'effect'),
      'the tool ran',
    );
    assert.match(result.text, /pelican/i);
    assert.deepEqual(pairingViolations(conversationView(await recordsOf(fixture.path))), []);
  } finally {
    await fixture.close();
  }
});
