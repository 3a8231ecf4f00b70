import { type FSWatcher, watch } from 'node:fs';
import { basename } from 'node:path';

/** More folders than this are not watched one by one: the poll alone notices their changes. */
const MAX_WATCHED_FOLDERS = 1000;

/**
 * A watch (not recursive) on each folder worth watching, kept to the set the last check found:
 * a folder that appears is watched from the check after it, one that goes is let go. A watch
 * that cannot be made (the folder went, the system's watch limit) is left to the poll.
 *
 * @example
 * const watching = new FolderWatch();
 * watching.start(() => console.log('something changed'));
 * watching.follow(new Set(['/runs']));
 * watching.stop();
 */
export class FolderWatch {
  #changed: (() => void) | undefined;
  readonly #watchers = new Map<string, FSWatcher>();

  /** Calls `changed` on every change heard from now on (nothing is watched before `follow`). */
  start(changed: () => void): void {
    this.#changed = changed;
  }

  /** Watches exactly `folders` (none past the limit): new ones added, gone ones let go. */
  follow(folders: ReadonlySet<string>): void {
    if (this.#changed === undefined) return;
    const wanted = folders.size > MAX_WATCHED_FOLDERS ? new Set<string>() : folders;
    for (const [folder, watcher] of this.#watchers) {
      if (!wanted.has(folder)) {
        watcher.close();
        this.#watchers.delete(folder);
      }
    }
    for (const folder of wanted) {
      if (this.#watchers.has(folder)) continue;
      try {
        const forget = (): void => {
          watcher.close();
          if (this.#watchers.get(folder) === watcher) this.#watchers.delete(folder);
        };
        const watcher = watch(folder, { persistent: false }, (event, name) => {
          // The folder itself went (removed, renamed): this watch hears nothing more, so it is
          // let go, and the next check watches whatever folder is at the path then.
          if (event === 'rename' && name === basename(folder)) forget();
          this.#changed?.();
        });
        watcher.on('error', forget);
        this.#watchers.set(folder, watcher);
      } catch {
        // Polled instead.
      }
    }
  }

  /** Lets every watch go; nothing is heard after. */
  stop(): void {
    this.#changed = undefined;
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }
}
