import type { LanguageModelV4 } from '@ai-sdk/provider';
import { gateway, type LanguageModel, UnsupportedModelVersionError, wrapLanguageModel } from 'ai';

/**
 * The provider model behind a backend, as the AI SDK resolves it for `streamText`: a string is
 * a model id of the global provider (`globalThis.AI_SDK_DEFAULT_PROVIDER`, by default the Vercel
 * AI Gateway); a model of an older specification (v2, v3) is adapted to v4 by the SDK's own
 * adapter. Throws what the SDK throws for a model it cannot use (the caller turns that into a
 * failed attempt).
 *
 * @example
 * const model = resolveBackend(openai('gpt-5'));
 * const { stream } = await model.doStream({ prompt, abortSignal });
 */
export function resolveBackend(backend: LanguageModel): LanguageModelV4 {
  if (typeof backend !== 'string' && backend.specificationVersion === 'v4') return backend;
  const model =
    typeof backend === 'string'
      ? (globalThis.AI_SDK_DEFAULT_PROVIDER ?? gateway).languageModel(backend)
      : backend;
  if (!['v2', 'v3', 'v4'].includes(model.specificationVersion)) {
    const unsupported = model as {
      specificationVersion: string;
      provider: string;
      modelId: string;
    };
    throw new UnsupportedModelVersionError({
      version: unsupported.specificationVersion,
      provider: unsupported.provider,
      modelId: unsupported.modelId,
    });
  }
  // With no middleware, wrapLanguageModel is exactly the SDK's adapter to the v4 specification.
  return model.specificationVersion === 'v4' ? model : wrapLanguageModel({ model, middleware: [] });
}
