import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Data the bench generates once and reuses: `DATA/NAME-COUNT/` with its manifest beside it
 * (`NAME-COUNT.manifest.json`, written last, so a generation cut short is made again). Reused
 * while the manifest's version and count are the ones asked for; otherwise the folder is
 * removed and `make` fills it anew, returning the manifest.
 *
 * @example
 * const { folder, manifest } = await generatedData('bench/data', 'status', 5, 10_000, (folder) => fill(folder));
 */
export async function generatedData<M extends { version: number; count: number }>(
  dataFolder: string,
  name: string,
  version: number,
  count: number,
  make: (folder: string) => Promise<M>,
): Promise<{ folder: string; manifest: M; generatedMs: number }> {
  const folder = join(dataFolder, `${name}-${count}`);
  const manifestPath = join(dataFolder, `${name}-${count}.manifest.json`);
  try {
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as M;
    if (manifest.version === version && manifest.count === count) {
      return { folder, manifest, generatedMs: 0 };
    }
  } catch {
    // Absent or stale: generate below.
  }
  const started = performance.now();
  await rm(folder, { recursive: true, force: true });
  await rm(manifestPath, { force: true });
  const manifest = await make(folder);
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return { folder, manifest, generatedMs: performance.now() - started };
}
