import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockLanguageModelV4 } from 'ai/test';
import { backendsOf, modelSpecOf } from '../../src/subagents/agent-definition.ts';
import { ModelSpecError, resolveModelSpec } from '../../src/subagents/model-spec.ts';

function refusal(spec: string, env: Record<string, string>): ModelSpecError {
  try {
    resolveModelSpec(spec, env);
  } catch (error) {
    assert.ok(error instanceof ModelSpecError, String(error));
    return error;
  }
  assert.fail(`${spec} was accepted`);
}

describe('resolveModelSpec', () => {
  it('makes models for the three providers', () => {
    const openai = resolveModelSpec('openai:gpt-5-mini', { OPENAI_API_KEY: 'k' });
    assert.equal(openai.modelId, 'gpt-5-mini');
    assert.match(openai.provider, /^openai/);
    const anthropic = resolveModelSpec('anthropic:claude-sonnet-4-5', { ANTHROPIC_API_KEY: 'k' });
    assert.equal(anthropic.modelId, 'claude-sonnet-4-5');
    assert.match(anthropic.provider, /^anthropic/);
    const local = resolveModelSpec('openai-compatible:http://127.0.0.1:8080/v1#qwen3:8b', {});
    assert.equal(local.modelId, 'qwen3:8b');
    assert.match(local.provider, /^openai-compatible/);
  });

  it('names the variable of a missing key', () => {
    const openai = refusal('openai:gpt-5', {});
    assert.equal(openai.reason, 'missing-key');
    assert.equal(openai.variable, 'OPENAI_API_KEY');
    assert.match(openai.message, /set OPENAI_API_KEY/);
    assert.match(
      refusal('anthropic:claude', { OPENAI_API_KEY: 'k' }).message,
      /set ANTHROPIC_API_KEY/,
    );
  });

  it('refuses unknown providers and malformed specs, saying what is expected', () => {
    const unknown = refusal('mistral:large', {});
    assert.equal(unknown.reason, 'unknown-provider');
    assert.match(
      unknown.message,
      /unknown provider "mistral" \(known: openai, anthropic, openai-compatible\)/,
    );
    for (const spec of [
      'gpt-5',
      ':gpt-5',
      'openai:',
      'openai-compatible:http://x/v1',
      'openai-compatible:ftp://x#m',
    ]) {
      assert.equal(refusal(spec, { OPENAI_API_KEY: 'k' }).reason, 'malformed', spec);
    }
  });
});

describe('agent definitions', () => {
  it('resolves specs through the hook and passes ready models through, in order', () => {
    const ready = new MockLanguageModelV4({ provider: 'scripted', modelId: 'one' });
    const made: string[] = [];
    const backends = backendsOf(
      { description: '', system: '', model: ['openai:a', ready] },
      (spec) => {
        made.push(spec);
        return ready;
      },
    );
    assert.deepEqual(made, ['openai:a']);
    assert.equal(backends.length, 2);
    assert.equal(modelSpecOf({ description: '', system: '', model: ready }), 'scripted:one');
    assert.equal(modelSpecOf({ description: '', system: '', model: 'anthropic:x' }), 'anthropic:x');
  });
});
