import { randomBytes } from 'node:crypto';

/**
 * Sixteen hex digits from the system's cryptographic source: a temporary name nobody can
 * guess, so nobody can put a symbolic link (or anything else) there before it is created.
 *
 * @example
 * randomSuffix(); // '9f86d081884c7d65'
 */
export function randomSuffix(): string {
  return randomBytes(8).toString('hex');
}

/**
 * A temporary name beside `path` for a file to be created exclusively (O_CREAT|O_EXCL|
 * O_NOFOLLOW) and then renamed onto `path`: `<path>.<random>.tmp`. The random part comes from
 * `random` (tests pass their own; the default is {@link randomSuffix}).
 *
 * @example
 * temporaryPathOf('runs/a.jsonl.owner'); // 'runs/a.jsonl.owner.9f86d081884c7d65.tmp'
 */
export function temporaryPathOf(path: string, random: () => string = randomSuffix): string {
  return `${path}.${random()}.tmp`;
}
