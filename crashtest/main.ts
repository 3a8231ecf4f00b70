import { Worker } from 'node:worker_threads';
import type { ImageFigures } from './crash-images.ts';
import { runFuzz } from './fuzz.ts';
import { type BreachFigures, FIGURES } from './invariants.ts';
import { runIoErrors } from './io-errors.ts';
import { runLedgerKills } from './ledger-kills.ts';
import { runReviverRace } from './reviver-race.ts';
import { SCENARIOS } from './scenarios.ts';
import { runSigkillLoop } from './sigkill-loop.ts';
import { runTreeRace } from './tree-race.ts';
import { runWrapperKills } from './wrapper-kills.ts';

/*
 * `npm run crashtest [-- --long] [--seed N] [--only images,kills,ai-sdk,openai-agents,races,io,fuzz]`: the proof of
 * crash safety (docs/crash-safety.md). Prints each part's figures and ends with one line,
 * `crashtest: images=… sigkills=… races=… fuzz=… reconciled=… lost=0 doubled=0 pairing=0 throws=0
 * failed=0`;
 * exits 1 when a counter that must be zero is not, or a part fell short of its quota.
 */

const args = process.argv.slice(2);
if (args.includes('--distributed')) {
  const { distributedMain } = await import('./distributed/main.ts');
  process.exit(await distributedMain(args));
}
const long = args.includes('--long');
const optionValue = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index < 0 ? undefined : args[index + 1];
};
const seed = Number(optionValue('--seed') ?? process.env.SEED ?? Date.now() % 2 ** 31);
const only = new Set(
  (optionValue('--only') ?? 'images,kills,ai-sdk,openai-agents,races,io,fuzz').split(','),
);
const quotas = long
  ? {
      images: 30_000,
      kills: 500,
      ledgerKills: 100,
      aiSdkKills: 300,
      openaiAgentsKills: 300,
      races: 2000,
      treeRaces: 500,
      fuzz: 300_000,
    }
  : {
      images: 10_000,
      kills: 200,
      ledgerKills: 30,
      aiSdkKills: 100,
      openaiAgentsKills: 100,
      races: 500,
      treeRaces: 200,
      fuzz: 100_000,
    };

console.log(`crashtest: seed ${seed}${long ? ' (long)' : ''} — replay with --seed ${seed}`);
const totals = { lost: 0, doubled: 0, pairing: 0, throws: 0, failed: 0 };
const failures: string[] = [];
const add = (figures: BreachFigures) => {
  for (const figure of FIGURES) totals[figure] += figures[figure];
};
const counts = { images: 0, sigkills: 0, races: 0, fuzz: 0, reconciled: 0 };
process.on('unhandledRejection', (error) => {
  totals.throws += 1;
  failures.push(`unhandled rejection: ${error instanceof Error ? error.stack : String(error)}`);
});
const began = performance.now();

function imagesInWorkers(): Promise<ImageFigures[]> {
  const names = SCENARIOS.map((scenario) => scenario.name);
  // Two workers; the tree-shaped scenarios are the heavy ones, so deal them out alternately.
  const halves = [
    names.filter((_, index) => index % 2 === 0),
    names.filter((_, index) => index % 2 === 1),
  ];
  const results: ImageFigures[] = [];
  return Promise.all(
    halves.map(
      (half) =>
        new Promise<void>((resolve, reject) => {
          const worker = new Worker(new URL('./image-worker.ts', import.meta.url), {
            workerData: {
              names: half,
              seed,
              stride: 1,
              reorderedPerBoundary: long ? 24 : 8,
              // Distinct images are counted, and both runs ask for a number of their own
              // (10,000 and 30,000). When model calls got faster the tree's workers did more
              // between two writes of main's, and the torn tree is torn where less is left to
              // revive: the default's 11 cuts made 9,787 images, the long run's 40 made 26,658
              // and 48 made 30,101 (too close to its 30,000): 12 and 52.
              tornPerWrite: long ? 52 : 12,
            },
          });
          worker.on('message', (message: { figures: ImageFigures; breaches: string[] }) => {
            results.push(message.figures);
            failures.push(...message.breaches.slice(0, 5));
            console.log(
              `  images ${message.figures.scenario}: ${message.figures.images} in ${message.figures.milliseconds} ms`,
            );
          });
          worker.on('error', reject);
          worker.on('exit', () => resolve());
        }),
    ),
  ).then(() =>
    SCENARIOS.flatMap((scenario) => results.filter((entry) => entry.scenario === scenario.name)),
  );
}

const imagePart = only.has('images') ? imagesInWorkers() : Promise.resolve([] as ImageFigures[]);

const sections: string[] = [];
if (only.has('kills')) {
  const kills = await runSigkillLoop({ kills: quotas.kills, lanes: 2, seed });
  counts.sigkills = kills.bySigkill;
  add(kills);
  failures.push(...kills.failures);
  sections.push(
    `SIGKILL loop: ${kills.kills} kills (${kills.bySigkill} by SIGKILL, ${kills.midRun} mid-run), ` +
      `delays 0–${Math.round(kills.baselineMilliseconds * 1.1)} ms of a ${kills.baselineMilliseconds} ms run; ` +
      `first delays ${kills.delays.slice(0, 5).join(', ')} ms`,
  );
  if (kills.bySigkill < quotas.kills) totals.failed += 1;
  // A tool whose reconcile sees the world (a ledger), killed mid-charge and revived after asking.
  const ledger = await runLedgerKills({ kills: quotas.ledgerKills, lanes: 2, seed });
  counts.sigkills += ledger.bySigkill;
  counts.reconciled = ledger.reconciled;
  add(ledger);
  failures.push(...ledger.failures);
  sections.push(
    `Ledger kills: ${ledger.kills} kills (${ledger.bySigkill} by SIGKILL) of a run charging a ledger; ` +
      `${ledger.reconciled} calls settled by an honest reconcile as the ledger says (${ledger.recovered} completed, ${ledger.reconciled - ledger.recovered} did not happen); ` +
      `${ledger.fellBack} lying, throwing or hanging reconciles fell back to the interrupted text`,
  );
  if (ledger.bySigkill < quotas.ledgerKills || ledger.reconciled === 0 || ledger.fellBack === 0) {
    failures.push(
      'the ledger kills fell short: every kill a SIGKILL, some calls reconciled, some fallen back',
    );
    totals.failed += 1;
  }
}
const wrapperParts = [
  { part: 'ai-sdk', quota: quotas.aiSdkKills, title: 'AI SDK', what: 'a wrapped ToolLoopAgent' },
  {
    part: 'openai-agents',
    quota: quotas.openaiAgentsKills,
    title: 'OpenAI Agents',
    what: 'a wrapped OpenAI Agents JS run',
  },
] as const;
for (const { part, quota, title, what } of wrapperParts) {
  if (!only.has(part)) continue;
  // The same kills, of a process running a program of another SDK through the wrappers.
  const kills = await runWrapperKills({ program: part, kills: quota, lanes: 2, seed });
  counts.sigkills += kills.bySigkill;
  add(kills);
  failures.push(...kills.failures);
  sections.push(
    `${title} kills: ${kills.kills} kills of ${what} (${kills.bySigkill} by SIGKILL, ${kills.revived} revived — ${kills.revivedByCli} by llm-agent revive —, ${kills.midTool} inside a tool), delays 0–${Math.round(kills.baselineMilliseconds * 1.1)} ms after its run opened`,
  );
  if (
    kills.bySigkill < quota ||
    kills.revivedByCli === 0 ||
    kills.revived === kills.revivedByCli ||
    kills.midTool === 0
  ) {
    failures.push(
      `the ${part} kills fell short: every kill a SIGKILL, some revived by llm-agent revive and some by the program, some inside a tool`,
    );
    totals.failed += 1;
  }
}
if (only.has('races')) {
  const race = await runReviverRace({ rounds: quotas.races, workers: 4, seed });
  counts.races = race.clean;
  totals.failed += race.failed;
  failures.push(...race.failures);
  sections.push(
    `Reviver races: ${race.rounds} rounds × ${race.workers} processes: ${race.clean} with exactly one winner; losers told ${[...race.losers].map(([reason, count]) => `${reason} ×${count}`).join(', ')}`,
  );
  // Trees: 2–4 `llm-agent revive --yes` on one crashed three-level tree with pending joins.
  const tree = await runTreeRace({ rounds: quotas.treeRaces, workers: 4, seed });
  counts.races += tree.clean;
  totals.failed += tree.failed;
  failures.push(...tree.failures);
  sections.push(
    `Tree races: ${tree.rounds} rounds, ${tree.processes} revive --yes processes on a crashed three-level tree: ${tree.clean} where one process revived the whole tree and every join got its child's answer; the others ${[...tree.losers].map(([kind, count]) => `${kind} ×${count}`).join(', ')}`,
  );
}
if (only.has('io')) {
  const io = await runIoErrors({ long });
  add(io);
  failures.push(...io.failures.slice(0, 10));
  sections.push(
    `I/O errors: ${io.runs} runs, the fault fired in ${io.fired}; ${io.refused} ended in a clear refusal`,
  );
  if (io.fired === 0) totals.failed += 1;
}
if (only.has('fuzz')) {
  const fuzz = await runFuzz({ cases: quotas.fuzz, seed });
  counts.fuzz = fuzz.cases;
  totals.throws += fuzz.throws;
  totals.failed += fuzz.writes;
  failures.push(...fuzz.failures);
  sections.push(
    `Fuzz: ${fuzz.cases} mutated transcripts into peek and inspect: ${fuzz.throws} throws, ${fuzz.writes} writes; ${[...fuzz.outcomes].map(([key, count]) => `${key} ${count}`).join(', ')}`,
  );
}
const images = await imagePart;
if (images.length > 0) {
  console.log('');
  console.log(
    '| scenario | boundaries | images | reordered | revived | refused (damaged) | lost | doubled | pairing | throws | failed | ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const figures of images) {
    console.log(
      `| ${figures.scenario} | ${figures.boundaries} | ${figures.images} | ${figures.reordered} | ${figures.revived} | ${figures.refusedDamaged} | ${figures.lost} | ${figures.doubled} | ${figures.pairing} | ${figures.throws} | ${figures.failed} | ${figures.milliseconds} |`,
    );
    counts.images += figures.images;
    add(figures);
  }
  if (counts.images < quotas.images) {
    failures.push(`only ${counts.images} crash images, fewer than ${quotas.images}`);
    totals.failed += 1;
  }
}
console.log('');
for (const section of sections) console.log(section);
for (const failure of failures.slice(0, 30)) console.log(`  ${failure.split('\n')[0]}`);
console.log(`took ${Math.round((performance.now() - began) / 1000)} s`);
console.log(
  `crashtest: images=${counts.images} sigkills=${counts.sigkills} races=${counts.races} fuzz=${counts.fuzz} reconciled=${counts.reconciled} lost=${totals.lost} doubled=${totals.doubled} pairing=${totals.pairing} throws=${totals.throws} failed=${totals.failed}`,
);
process.exitCode = Object.values(totals).some((value) => value > 0) ? 1 : 0;
