import { spawnSync } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The status, revival and scale-out benches measure the CLI and library as shipped, `dist/` (see
 * bench/revival-child.mjs): build it when a source file is newer than its compiled file, or has
 * none. A failed build stops the bench rather than measure stale code.
 *
 * @example
 * await ensureBuilt(console.log);
 */
export async function ensureBuilt(log: (line: string) => void): Promise<void> {
  const stale = await firstStale('src');
  if (stale === null) return;
  log(`  building dist/ (${stale})`);
  const build = spawnSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) {
    throw new Error(
      `npm run build failed (${build.error?.message ?? `exit ${build.status}`}): the revival bench measures dist/; fix the build, or set BENCH_REVIVAL_SOURCE=1 to measure src/`,
    );
  }
}

/** The first source file whose dist/ counterpart is missing or older, as a reason; else null. */
async function firstStale(folder: string): Promise<string | null> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      const found = await firstStale(path);
      if (found !== null) return found;
      continue;
    }
    // A declaration file (src/types/*.d.ts) compiles to nothing: not a reason to build.
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    const compiled = `dist/${path.slice('src/'.length, -'.ts'.length)}.js`;
    const built = await stat(compiled).catch(() => null);
    if (built === null) return `${compiled} is missing`;
    if ((await stat(path)).mtimeMs > built.mtimeMs) return `${path} is newer than ${compiled}`;
  }
  return null;
}
