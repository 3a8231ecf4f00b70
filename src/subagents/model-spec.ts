import { createRequire } from 'node:module';
import type * as Anthropic from '@ai-sdk/anthropic';
import type * as OpenAI from '@ai-sdk/openai';
import type * as OpenAICompatible from '@ai-sdk/openai-compatible';
import type { LanguageModelV4 } from '@ai-sdk/provider';

// Provider packages are loaded when a spec names them (require of an ES module shares the
// module instance with `import`): a run on ready models, the tests and the offline demo do
// not pay for three SDK clients they never use.
const load = createRequire(import.meta.url);

/**
 * Why a model spec could not be turned into a model.
 *
 * @example
 * if (error instanceof ModelSpecError && error.reason === 'missing-key') console.error(`set ${error.variable}`);
 */
export type ModelSpecProblem = 'malformed' | 'unknown-provider' | 'missing-key';

/**
 * A model spec that names no usable model. Its message says what to change: the spec's shape,
 * the providers known, or the environment variable that holds the missing key.
 *
 * @example
 * try {
 *   resolveModelSpec('openai:gpt-5', {});
 * } catch (error) {
 *   if (error instanceof ModelSpecError) console.error(error.message); // …set OPENAI_API_KEY
 * }
 */
export class ModelSpecError extends Error {
  readonly reason: ModelSpecProblem;
  readonly spec: string;
  /** For `missing-key`: the environment variable to set. */
  readonly variable: string | undefined;

  constructor(reason: ModelSpecProblem, spec: string, detail: string, variable?: string) {
    super(`model spec ${JSON.stringify(spec)}: ${detail}`);
    this.name = 'ModelSpecError';
    this.reason = reason;
    this.spec = spec;
    this.variable = variable;
  }
}

/**
 * The providers a spec may name, and the variable each reads its key from.
 *
 * @example
 * MODEL_PROVIDERS.anthropic; // 'ANTHROPIC_API_KEY'
 */
export const MODEL_PROVIDERS = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'OPENAI_COMPATIBLE_API_KEY',
} as const;

/**
 * Turn a model spec into an AI SDK model:
 * - `openai:MODEL` (key from `OPENAI_API_KEY`),
 * - `anthropic:MODEL` (key from `ANTHROPIC_API_KEY`),
 * - `openai-compatible:BASEURL#MODEL` (a Chat Completions server; key from
 *   `OPENAI_COMPATIBLE_API_KEY` when set, none otherwise — local servers need none).
 *
 * Throws a {@link ModelSpecError} for a malformed spec, an unknown provider or a missing key,
 * naming what to fix: a configuration error is found before any transcript is written.
 *
 * @example
 * const model = resolveModelSpec('anthropic:claude-sonnet-4-5');
 * const local = resolveModelSpec('openai-compatible:http://127.0.0.1:8080/v1#qwen3', {});
 */
export function resolveModelSpec(
  spec: string,
  env: Record<string, string | undefined> = process.env,
): LanguageModelV4 {
  const problem = checkModelSpec(spec);
  if (problem !== null) throw problem;
  const colon = spec.indexOf(':');
  const provider = spec.slice(0, colon);
  const rest = spec.slice(colon + 1);
  switch (provider) {
    case 'openai': {
      const { createOpenAI } = load('@ai-sdk/openai') as typeof OpenAI;
      return createOpenAI({ apiKey: requireKey(spec, provider, env) })(rest);
    }
    case 'anthropic': {
      const { createAnthropic } = load('@ai-sdk/anthropic') as typeof Anthropic;
      return createAnthropic({ apiKey: requireKey(spec, provider, env) })(rest);
    }
    case 'openai-compatible': {
      const hash = rest.lastIndexOf('#');
      const baseURL = rest.slice(0, hash);
      const { createOpenAICompatible } = load(
        '@ai-sdk/openai-compatible',
      ) as typeof OpenAICompatible;
      const apiKey = env[MODEL_PROVIDERS['openai-compatible']];
      const settings: OpenAICompatible.OpenAICompatibleProviderSettings = {
        name: 'openai-compatible',
        baseURL,
      };
      if (apiKey !== undefined && apiKey !== '') settings.apiKey = apiKey;
      return createOpenAICompatible(settings)(rest.slice(hash + 1));
    }
    default:
      throw new Error(`internal: checkModelSpec let ${JSON.stringify(spec)} through`);
  }
}

/**
 * What is wrong with a model spec's shape (`malformed` or `unknown-provider`), or null when
 * {@link resolveModelSpec} would accept it given its key. Pure: loads no provider and reads no
 * key, so that a module's specs can be checked as soon as it loads.
 *
 * @example
 * checkModelSpec('openai:gpt-5'); // null
 * checkModelSpec('gpt-5')?.reason; // 'malformed'
 */
export function checkModelSpec(spec: string): ModelSpecError | null {
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1) {
    return new ModelSpecError(
      'malformed',
      spec,
      'expected PROVIDER:MODEL, such as openai:gpt-5, anthropic:claude-sonnet-4-5 or openai-compatible:http://127.0.0.1:8080/v1#MODEL',
    );
  }
  const provider = spec.slice(0, colon);
  const rest = spec.slice(colon + 1);
  if (!Object.hasOwn(MODEL_PROVIDERS, provider)) {
    return new ModelSpecError(
      'unknown-provider',
      spec,
      `unknown provider ${JSON.stringify(provider)} (known: ${Object.keys(MODEL_PROVIDERS).join(', ')})`,
    );
  }
  if (provider !== 'openai-compatible') return null;
  const hash = rest.lastIndexOf('#');
  if (hash <= 0 || hash === rest.length - 1) {
    return new ModelSpecError(
      'malformed',
      spec,
      'expected openai-compatible:BASEURL#MODEL, such as openai-compatible:http://127.0.0.1:8080/v1#qwen3',
    );
  }
  const baseURL = rest.slice(0, hash);
  if (!/^https?:\/\//.test(baseURL)) {
    return new ModelSpecError('malformed', spec, `the base URL ${baseURL} is not http(s)`);
  }
  return null;
}

function requireKey(
  spec: string,
  provider: 'openai' | 'anthropic',
  env: Record<string, string | undefined>,
): string {
  const variable = MODEL_PROVIDERS[provider];
  const key = env[variable];
  if (key === undefined || key === '') {
    throw new ModelSpecError(
      'missing-key',
      spec,
      `the ${provider} provider needs an API key: set ${variable}`,
      variable,
    );
  }
  return key;
}
