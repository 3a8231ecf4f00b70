import type { LanguageModel } from 'ai';
import type { BackendOptions, ModelCallSettings } from './types.ts';

/**
 * Lay settings over each other, later over earlier: each setting the later one has replaces
 * the earlier's, except `headers` and `providerOptions`, which merge — headers by name, provider
 * options per provider, key by key. Pure.
 *
 * @example
 * mergeSettings({ temperature: 0, headers: { a: '1' } }, { headers: { b: '2' } });
 * // { temperature: 0, headers: { a: '1', b: '2' } }
 */
export function mergeSettings(...layers: (ModelCallSettings | undefined)[]): ModelCallSettings {
  const merged: ModelCallSettings = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const [key, value] of Object.entries(layer) as [keyof ModelCallSettings, unknown][]) {
      if (value === undefined) continue;
      if (key === 'headers') {
        merged.headers = { ...merged.headers, ...(value as Record<string, string>) };
      } else if (key === 'providerOptions') {
        const options = { ...merged.providerOptions };
        for (const [provider, given] of Object.entries(
          value as NonNullable<ModelCallSettings['providerOptions']>,
        )) {
          options[provider] = { ...options[provider], ...given };
        }
        merged.providerOptions = options;
      } else {
        (merged as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}

/**
 * True for a backend given with settings of its own (`{ model, … }`), false for a model or a
 * model id.
 *
 * @example
 * isBackendOptions({ model: openai('gpt-5'), temperature: 0 }); // true
 */
export function isBackendOptions(
  backend: LanguageModel | BackendOptions,
): backend is BackendOptions {
  return (
    typeof backend === 'object' &&
    backend !== null &&
    'model' in backend &&
    !('specificationVersion' in backend)
  );
}

/**
 * The settings of a {@link BackendOptions} without its model.
 *
 * @example
 * settingsOf({ model, temperature: 0 }); // { temperature: 0 }
 */
export function settingsOf(backend: BackendOptions): ModelCallSettings {
  const { model: _model, ...settings } = backend;
  return settings;
}
