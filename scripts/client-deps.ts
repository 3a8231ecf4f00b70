/*
 * The real agent clients `npm run test:clients` drives are not dependencies of the package:
 * they are pinned in test/clients/package.json, with a lockfile of their own, so that a
 * contributor's `npm ci` installs none of them (over a gigabyte). This installs them there when
 * they are missing or do not match that lockfile, and otherwise does nothing. Run by
 * `npm run test:clients` before its tests.
 *
 * It runs `npm install --no-save`, not `npm ci`: the clients name optional per-platform packages
 * the registry does not serve (`@crosscopy/clipboard-darwin-x64`, opencode's other platforms), so
 * the lockfile cannot list them, and `npm ci` refuses any lockfile that lacks a package the
 * manifests name, optional or not. `npm install` installs the lockfile's versions all the same,
 * and the check below proves it did: every locked package at its locked version, else exit 1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLIENTS = fileURLToPath(new URL('../test/clients/', import.meta.url));
const LOCK = join(CLIENTS, 'package-lock.json');
const INSTALLED = join(CLIENTS, 'node_modules', '.package-lock.json');

interface Lock {
  packages: Record<string, { version?: string; optional?: boolean }>;
}

/** Why the installed clients do not match the lockfile, or null when they do. */
function outdated(): string | null {
  if (!existsSync(INSTALLED)) return 'not installed';
  if (statSync(LOCK).mtimeMs > statSync(INSTALLED).mtimeMs) return 'the lockfile changed since';
  const wanted = (JSON.parse(readFileSync(LOCK, 'utf8')) as Lock).packages;
  const have = (JSON.parse(readFileSync(INSTALLED, 'utf8')) as Lock).packages;
  for (const [path, entry] of Object.entries(wanted)) {
    if (path === '' || entry.optional === true) continue;
    if (have[path]?.version !== entry.version) {
      return `${path.replace(/^node_modules\//, '')} is ${have[path]?.version ?? 'missing'}, the lockfile says ${entry.version}`;
    }
  }
  return null;
}

const why = outdated();
if (why === null) {
  console.log('test:clients: the pinned clients in test/clients/node_modules match the lockfile');
} else {
  console.log(
    `test:clients: installing the pinned clients (${why}): npm install --prefix test/clients`,
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = ['install', '--no-save', '--prefix', CLIENTS, '--no-audit', '--no-fund'];
  const result = spawnSync(npm, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  const still = outdated();
  if (still !== null) {
    console.error(
      `test:clients: the install does not match test/clients/package-lock.json: ${still}`,
    );
    process.exit(1);
  }
}
