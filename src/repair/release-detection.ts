import type { ForeignFormatName, FormatDetection } from './foreign-format.ts';
import { releaseVerdict, TESTED_RELEASES } from './tested-releases.ts';

/**
 * The detection of a session whose lines name the client versions that wrote them, judged
 * against the releases tested: every version between the oldest and the newest tested is
 * supported; one older, or not a plain version, is refused naming the range; one newer than
 * the newest tested is refused naming both, with `newerThan` set (`--allow-newer` may then
 * proceed, shape by shape). `versions` are as the file gives them, already made safe to show;
 * the one shown is the newest (the last written).
 *
 * @example
 * const detected = releaseDetection('codex', ['0.171.0'], { id: 'x' }); // supported
 */
export function releaseDetection(
  format: ForeignFormatName,
  versions: readonly string[],
  session: { id?: string; cwd?: string },
): FormatDetection {
  const tested = TESTED_RELEASES[format];
  const range = `${tested[0]} to ${tested.at(-1)} (tested with ${tested.join(', ')})`;
  const shownVersion = versions.at(-1) ?? 'unknown';
  let newest: string | undefined;
  for (const version of new Set(versions)) {
    const verdict = releaseVerdict(format, version);
    if (verdict.kind === 'older' || verdict.kind === 'unknown') {
      return {
        format,
        version: shownVersion,
        supported: false,
        reason: `written by ${format} ${version}, ${verdict.kind === 'older' ? 'older than' : 'not a release in'} the range repair was tested with: ${range}`,
        session,
      };
    }
    if (verdict.kind === 'newer') newest = verdict.newest;
  }
  if (newest === undefined) return { format, version: shownVersion, supported: true, session };
  const newer = versions.filter((version) => releaseVerdict(format, version).kind === 'newer');
  return {
    format,
    version: shownVersion,
    supported: false,
    reason: `written by ${format} ${[...new Set(newer)].join(', ')}, newer than ${newest}, the newest release repair was tested with (${range}); --allow-newer repairs it only if every line it reads and writes is of a shape the tests have seen`,
    newerThan: newest,
    session,
  };
}
