import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned Codex CLI's entry point, run with this Node. */
export const CODEX_JS = join(
  fileURLToPath(new URL('..', import.meta.url)),
  'node_modules',
  '@openai',
  'codex',
  'bin',
  'codex.js',
);

/**
 * Codex's `config.toml` for a scripted server at `url`: a custom provider, no retries, no
 * approvals, no sandbox (the client tests and the fixture generator run Codex alike).
 */
export function codexConfigToml(url: string, model = 'gpt-5'): string {
  return [
    `model = "${model}"`,
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${url}"`,
    'env_key = "FAKE_MODEL_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
}
