/**
 * A promise the test resolves when it chooses: a gate a tool waits behind, or a signal that a
 * state was reached.
 *
 * @example
 * const { promise: gate, release } = latch();
 * const slow = async () => { await gate; return 'done'; };
 * release();
 */
export function latch(): { promise: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}
