/*
 * The one seeded generator of the tests and the crash harness, so that a seed replays a run
 * exactly (`SEED=… npm test`, `npm run crashtest -- --seed …`).
 */

/**
 * A small seeded pseudo-random generator (mulberry32).
 *
 * @example
 * const random = seededRandom(42);
 * random(); // a number in [0, 1)
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `length` seeded random bytes.
 *
 * @example
 * const junk = randomBytesFrom(seededRandom(7), 64);
 */
export function randomBytesFrom(random: () => number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let index = 0; index < length; index++) bytes[index] = Math.floor(random() * 256);
  return bytes;
}

/**
 * Log and return the seed of a randomised test (`SEED=… npm test` replays a run).
 *
 * @example
 * const random = seededRandom(testSeed('junk-tail'));
 */
export function testSeed(name: string): number {
  const seed = Number(process.env.SEED ?? Date.now() % 2 ** 31);
  console.log(`${name}: seed ${seed} (replay with SEED=${seed})`);
  return seed;
}
