import { runDistributed } from './driver.ts';

/*
 * `npm run crashtest -- --distributed [--quick] [--reconcile] [--seed N]`: the scale-out promise
 * under chaos
 * (docs/crash-safety.md, "Across machines"). Ends with one line,
 * `crashtest-distributed: runs=… workers=… kills=… stops=… terminations=… revivals=… fenced=…
 * lost=0 doubled=0 replayed=0 pairing=0 double-revived=0 failed=0`, and exits 1 when a figure
 * that must be zero is not or a quota was not met.
 */

/** Parse the command line, run, print, and return the exit code. */
export async function distributedMain(args: string[]): Promise<number> {
  const optionValue = (name: string): string | undefined => {
    const index = args.indexOf(name);
    return index < 0 ? undefined : args[index + 1];
  };
  const seed = Number(optionValue('--seed') ?? process.env.SEED ?? Date.now() % 2 ** 31);
  const quick = args.includes('--quick');
  const reconcile = args.includes('--reconcile');
  console.log(
    `crashtest-distributed: seed ${seed}${quick ? ' (quick)' : ''}${reconcile ? ' (reconcile)' : ''} — replay the chaos with --seed ${seed}`,
  );
  const sizes = quick
    ? { runs: 30, workers: 4, kills: 12, stops: 4, terminations: 10 }
    : { runs: 300, workers: 4, kills: 200, stops: 50, terminations: 100 };
  const result = await runDistributed({
    seed,
    ...sizes,
    leaseMs: 600,
    maxRevivals: 10,
    concurrency: 8,
    reconcile,
    log: (line) => console.log(line),
  });
  const { figures, breaches } = result;
  const zeros = {
    lost: breaches.lost.length,
    doubled: breaches.doubled.length,
    replayed: breaches.replayed.length,
    pairing: breaches.pairing.length,
    'double-revived': breaches.doubleRevived.length,
    failed: breaches.failed.length + result.shortfalls.length,
  };
  for (const line of [
    ...Object.values(breaches).flat(),
    ...result.shortfalls.map((shortfall) => `short: ${shortfall}`),
  ].slice(0, 30)) {
    console.log(`  ✗ ${line}`);
  }
  console.log(
    `  finished=${figures.finished} capped=${figures.capped} joins=${figures.joins} executions=${figures.executions} zombies=${figures.zombies} worker-restarts=${figures.selfExits}`,
  );
  const shown = [
    'runs',
    'workers',
    'kills',
    'stops',
    'terminations',
    'revivals',
    'fenced',
    ...(reconcile ? (['reconciled', 'late'] as const) : []),
  ] as const;
  console.log(
    `crashtest-distributed: ${shown.map((name) => `${name}=${figures[name]}`).join(' ')} ${Object.entries(
      zeros,
    )
      .map(([name, count]) => `${name}=${count}`)
      .join(' ')}`,
  );
  return Object.values(zeros).every((count) => count === 0) ? 0 : 1;
}
