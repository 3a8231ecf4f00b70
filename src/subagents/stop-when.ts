/**
 * A promise that resolves when `signal` aborts or the optional timer ends — what a join races
 * its children against. Never rejects. Dispose it once the race is over: that cancels the
 * timer and the abort listener.
 *
 * @example
 * const stop = stopWhen(signal, (timer) => sleep(5000, timer));
 * try { await Promise.race([children, stop.promise]); } finally { stop.dispose(); }
 */
export function stopWhen(
  signal: AbortSignal,
  timer?: (signal: AbortSignal) => Promise<void>,
): { promise: Promise<void>; dispose: () => void } {
  const local = new AbortController();
  const promises: Promise<void>[] = [
    new Promise<void>((done) => {
      if (signal.aborted) done();
      signal.addEventListener('abort', () => done(), { once: true, signal: local.signal });
    }),
  ];
  if (timer !== undefined) promises.push(timer(local.signal).catch(() => undefined));
  return { promise: Promise.race(promises), dispose: () => local.abort() };
}
