/**
 * The last few run sections the ui rendered, so that a page visited again — reloaded, redrawn
 * after a change elsewhere in the tree, or opened back from another run — is not read and
 * rendered again while its transcript has not changed. A 48 MiB run takes the worker seconds
 * to read; its section is a few kilobytes.
 *
 * @module
 */
import { stat } from 'node:fs/promises';

/**
 * At most `size` sections (least recently used first out), each under a key that names the
 * section asked for and the transcript's identity, size and modification time when it was
 * rendered: a transcript appended to, replaced or repaired is rendered again.
 *
 * @example
 * const cache = new SectionCache(4);
 * const html = await cache.get(node.path, JSON.stringify([page, anchor]), () => render());
 */
export class SectionCache {
  readonly #size: number;
  readonly #entries = new Map<string, string>();

  constructor(size: number) {
    this.#size = size;
  }

  /**
   * The section of the transcript at `path` asked for as `request` (everything else it depends
   * on: the page, the anchor, the run's facts), from the cache while the file is unchanged,
   * else from `render` (and then kept). A file that cannot be stat'ed is never cached.
   */
  async get(path: string, request: string, render: () => Promise<string>): Promise<string> {
    const file = await stat(path, { bigint: true }).catch(() => undefined);
    if (file === undefined) return render();
    const key = JSON.stringify([
      path,
      request,
      `${file.dev}:${file.ino}`,
      `${file.size}`,
      `${file.mtimeNs}`,
    ]);
    const found = this.#entries.get(key);
    if (found !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, found);
      return found;
    }
    const html = await render();
    this.#entries.set(key, html);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#size) break;
      this.#entries.delete(oldest);
    }
    return html;
  }
}
