import type { ForeignFormatName } from './foreign-format.ts';

/**
 * The client releases `npm run test:clients` runs end to end (killed mid-tool, repaired,
 * resumed, the request checked by a strict model server), oldest first, per session format:
 * for each client the oldest release the registry serves that writes the same session format,
 * one from the middle, and the newest at the time of testing. A session written by a release
 * between the oldest and the newest is accepted; an older one is refused; a newer one is
 * refused unless `--allow-newer` and every line is of a shape the tests have seen
 * (`SEEN_SHAPES`). pi and Gemini CLI record no client version in a session (pi records its
 * format's version): their lists say what was tested, and the files are judged by their shapes.
 *
 * @example
 * const newest = TESTED_RELEASES['claude-code'].at(-1); // '2.1.332'
 */
export const TESTED_RELEASES: Readonly<Record<ForeignFormatName, readonly string[]>> = {
  'claude-code': ['1.0.98', '2.1.197', '2.1.332'],
  codex: ['0.146.0', '0.158.0', '0.171.0'],
  pi: ['0.37.2', '0.55.4', '0.73.1'],
  opencode: ['1.17.18', '1.18.18', '1.18.33', '1.18.34'],
  'gemini-cli': ['0.58.0', '0.59.0', '0.61.0'],
};

/**
 * Where a client version stands against the tested releases of its format.
 *
 * - `tested`: between the oldest and the newest tested release, both included;
 * - `older`: before the oldest (`oldest` names it);
 * - `newer`: after the newest (`newest` names it);
 * - `unknown`: not a plain `MAJOR.MINOR.PATCH` (a pre-release, or not a version at all).
 *
 * @example
 * const verdict: ReleaseVerdict = { kind: 'newer', newest: '2.1.332' };
 */
export type ReleaseVerdict =
  | { kind: 'tested' }
  | { kind: 'older'; oldest: string }
  | { kind: 'newer'; newest: string }
  | { kind: 'unknown' };

/**
 * How `version` (as a session records it) stands against the releases of `format` tested.
 *
 * @example
 * releaseVerdict('codex', '0.160.0'); // { kind: 'tested' }
 * releaseVerdict('codex', '0.180.0'); // { kind: 'newer', newest: '0.171.0' }
 */
export function releaseVerdict(format: ForeignFormatName, version: string): ReleaseVerdict {
  const tested = TESTED_RELEASES[format];
  const oldest = tested[0];
  const newest = tested.at(-1);
  const parts = versionParts(version);
  if (parts === null || oldest === undefined || newest === undefined) return { kind: 'unknown' };
  if (compareParts(parts, versionParts(oldest) as number[]) < 0) return { kind: 'older', oldest };
  if (compareParts(parts, versionParts(newest) as number[]) > 0) return { kind: 'newer', newest };
  return { kind: 'tested' };
}

/** The numbers of a plain `MAJOR.MINOR.PATCH` version, or null for anything else. */
function versionParts(version: string): number[] | null {
  const match = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})$/.exec(version);
  return match === null ? null : match.slice(1).map(Number);
}

function compareParts(left: readonly number[], right: readonly number[]): number {
  for (let index = 0; index < 3; index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
