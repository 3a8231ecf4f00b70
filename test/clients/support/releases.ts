/*
 * The releases of one client installed in test/clients/node_modules: the pinned one under its
 * own name, and the others under npm aliases (`claude-code-1-0-98`:
 * `npm:@anthropic-ai/claude-code@1.0.98`), each client test running every one of them.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MODULES = fileURLToPath(new URL('../node_modules/', import.meta.url));

/** One installed release: its version, its package folder, and whether it is the pinned one. */
export interface InstalledRelease {
  version: string;
  folder: string;
  pinned: boolean;
}

function release(folder: string, pinned: boolean): InstalledRelease {
  const path = join(MODULES, folder);
  const { version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { version, folder: path, pinned };
}

/**
 * Every installed release of `packageName`, oldest first: the pinned one and those under
 * aliases named `<aliasPrefix>-<digits>…`.
 */
export function installedReleases(packageName: string, aliasPrefix: string): InstalledRelease[] {
  const aliases = readdirSync(MODULES)
    .filter(
      (name) =>
        name.startsWith(`${aliasPrefix}-`) && /^\d/.test(name.slice(aliasPrefix.length + 1)),
    )
    .map((name) => release(name, false));
  return [...aliases, release(packageName, true)].sort((left, right) =>
    left.version.localeCompare(right.version, 'en', { numeric: true }),
  );
}

const RELEASE_FIXTURES = fileURLToPath(
  new URL('../../fixtures/foreign/releases/', import.meta.url),
);

/**
 * With `RECORD_RELEASE_FIXTURES=1`, copy a session a client test made (killed, repaired and
 * resumed by the real client) to test/fixtures/foreign/releases/<client>-<version>/<name>.jsonl,
 * where test/fixtures/foreign/seen-shapes.ts reads the line shapes the tests have seen.
 * Otherwise does nothing.
 */
export function recordRelease(client: string, version: string, name: string, file: string): void {
  if (process.env.RECORD_RELEASE_FIXTURES !== '1') return;
  const folder = join(RELEASE_FIXTURES, `${client}-${version}`);
  mkdirSync(folder, { recursive: true });
  copyFileSync(file, join(folder, `${name}.jsonl`));
}
