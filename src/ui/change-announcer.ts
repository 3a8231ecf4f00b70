/**
 * Tells the pages when the runs change: the source's signature checked every poll, and 100 ms
 * after the source's watch says something may have changed (a burst of writes is one check).
 *
 * @module
 */
import type { EventStream } from './event-stream.ts';
import type { UiSource } from './ui-source.ts';

/**
 * Starts announcing `tree-changed` to `events` when `source`'s signature changes; returns what
 * stops it. The baseline is taken before any check compares with it, and only ever moved by
 * a check, so no change between two checks — nor one made while no page listened — goes
 * unannounced. The watch starts first: the baseline's reading may be what tells it where to
 * look.
 *
 * @example
 * const stop = await announceChanges(source, events, 1000);
 */
export async function announceChanges(
  source: UiSource,
  events: EventStream,
  pollMs: number,
): Promise<() => void> {
  let seen: string | undefined;
  let checking = false;
  let again = false;
  const check = (): void => {
    if (seen === undefined || events.listeners === 0) return;
    if (checking) {
      again = true;
      return;
    }
    checking = true;
    source
      .signature()
      .then((now) => {
        if (now !== seen) events.send('tree-changed', now.length.toString());
        seen = now;
      })
      .catch(() => undefined)
      .finally(() => {
        checking = false;
        if (again) {
          again = false;
          check();
        }
      });
  };
  let soon: NodeJS.Timeout | undefined;
  const unwatch = source.watch?.(() => {
    soon ??= setTimeout(() => {
      soon = undefined;
      check();
    }, 100);
  });
  seen = await source.signature().catch(() => '');
  const poll = setInterval(check, pollMs);
  poll.unref();
  return () => {
    clearInterval(poll);
    clearTimeout(soon);
    unwatch?.();
  };
}
