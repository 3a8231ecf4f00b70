import { seededRandom } from '../test/support/seeded-random.ts';
import { CONCURRENCY_ATTACKS } from './concurrency-attacks.ts';
import { DAMAGE_ATTACKS } from './damage-attacks.ts';
import { FLEET_ATTACKS } from './fleet-attacks.ts';
import { IMPORT_ATTACKS } from './import-attacks.ts';
import { INPUT_ATTACKS } from './input-bound-attacks.ts';
import { LOCK_ATTACKS } from './lock-attacks.ts';
import { OWNERSHIP_ATTACKS } from './ownership-attacks.ts';
import { REPAIR_ATTACKS } from './repair-attacks.ts';
import { SYMLINK_ATTACKS } from './symlink-attacks.ts';
import { type Attack, atEnd, removeFolder, temporaryFolder, type Verdict } from './support.ts';
import { TERMINAL_ATTACKS } from './terminal-attacks.ts';
import { WRAPPER_ATTACKS } from './wrapper-attacks.ts';
import { WRAPPER_DAMAGE_ATTACKS } from './wrapper-damage-attacks.ts';
import { UI_ATTACKS } from './ui-attacks.ts';

/*
 * `npm run attack [-- --quick] [--seed N] [--only family,…|name,…] [--jobs N]`: every attack of
 * docs/security.md, run as an attacker with the same user's access would — black-box, through
 * the library's public API and the CLI as a process. Each attack first proves its fault
 * happened, then judges the defence by outcome; each is bounded in time (and its children in
 * memory). `--jobs` attacks run at once (default 3 in --quick, else 1). Prints the seed first,
 * one line per attack (as each ends), and ends with exactly one line
 * `attack: tried=N held=N broken=N`; exits 1 when anything broke.
 */

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const optionValue = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index < 0 ? undefined : args[index + 1];
};
const seed = Number(optionValue('--seed') ?? process.env.SEED ?? Date.now() % 2 ** 31);
const only = optionValue('--only')
  ?.split(',')
  .filter((entry) => entry !== '');

const ALL: Attack[] = [
  ...LOCK_ATTACKS,
  ...OWNERSHIP_ATTACKS,
  ...SYMLINK_ATTACKS,
  ...DAMAGE_ATTACKS,
  ...CONCURRENCY_ATTACKS,
  ...INPUT_ATTACKS,
  ...TERMINAL_ATTACKS,
  ...IMPORT_ATTACKS,
  ...FLEET_ATTACKS,
  ...UI_ATTACKS,
  ...REPAIR_ATTACKS,
  ...WRAPPER_ATTACKS,
  ...WRAPPER_DAMAGE_ATTACKS,
];
// --quick leaves out the attacks marked full (slow, or awaiting another branch's fix) unless
// --only names them.
const chosen =
  only === undefined
    ? ALL.filter((attack) => !quick || attack.full !== true)
    : ALL.filter((attack) => only.includes(attack.family) || only.includes(attack.name));

console.log(`attack: seed ${seed}${quick ? ' (quick)' : ''} — replay with --seed ${seed}`);
if (chosen.length === 0) {
  console.log(`no attack matches --only ${only?.join(',')}`);
  console.log('attack: tried=0 held=0 broken=0');
  process.exit(2);
}

/** A seed of its own per attack, so that `--only` replays the same choices. */
function attackSeed(name: string): number {
  let hash = seed >>> 0;
  for (const character of name)
    hash = Math.imul(hash ^ (character.codePointAt(0) ?? 0), 16777619) >>> 0;
  return hash;
}

const jobs = Number(optionValue('--jobs') ?? (quick ? 3 : 1));
const began = performance.now();
let held = 0;
let broken = 0;
const brokenLines: string[] = [];

async function runOne(attack: Attack): Promise<void> {
  const folder = await temporaryFolder(`attack-${attack.name}-`);
  const started = performance.now();
  const limit = attack.timeoutMs ?? (quick ? 60_000 : 300_000);
  let timer: NodeJS.Timeout | undefined;
  const abort = new AbortController();
  let result: Verdict;
  try {
    result = await Promise.race([
      attack.run({
        random: seededRandom(attackSeed(attack.name)),
        quick,
        folder,
        progress: (line) => console.log(`    ${attack.name}: ${line}`),
        signal: abort.signal,
      }),
      new Promise<Verdict>((resolve) => {
        timer = setTimeout(
          () =>
            resolve({
              held: false,
              evidence: `the attack did not end within ${limit / 1000} s (a hang)`,
            }),
          limit,
        );
      }),
    ]);
  } catch (error) {
    result = {
      held: false,
      evidence:
        `the attack threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`
          .split('\n')
          .slice(0, 3)
          .join(' | '),
    };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  await removeFolder(folder).catch(() => undefined);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const line = `${result.held ? 'held  ' : 'BROKEN'} ${attack.name} (${attack.family}, ${seconds} s): ${result.evidence}`;
  console.log(`  ${line}`);
  if (result.held) held += 1;
  else {
    broken += 1;
    brokenLines.push(line);
  }
}

// Attacks that measure memory or push the disk run alone, after the others; the others run
// `--jobs` at a time (each in its own folder, its children bounded on their own).
const shared = chosen.filter((attack) => attack.alone !== true);
const queue = [...shared];
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await runOne(next);
  }),
);
for (const attack of chosen.filter((entry) => entry.alone === true)) await runOne(attack);
console.log('');
if (brokenLines.length > 0) {
  console.log(`Broken (${brokenLines.length}):`);
  for (const line of brokenLines) console.log(`  ${line.slice(0, 300)}`);
}
console.log(`took ${Math.round((performance.now() - began) / 1000)} s`);
console.log(`attack: tried=${chosen.length} held=${held} broken=${broken}`);
for (const cleanup of atEnd) await cleanup().catch(() => undefined);
// Attacks that timed out may leave work behind (a hung read): end here, with the verdict.
process.exit(broken > 0 ? 1 : 0);
