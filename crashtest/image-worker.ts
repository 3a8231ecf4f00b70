import { parentPort, workerData } from 'node:worker_threads';
import { runScenarioImages } from './crash-images.ts';
import { SCENARIOS } from './scenarios.ts';

/*
 * Runs the crash-image test for some scenarios in a worker thread (the harness uses both
 * processors) and posts each scenario's figures and breaches back.
 */

const data = workerData as {
  names: string[];
  seed: number;
  stride: number;
  reorderedPerBoundary: number;
  tornPerWrite: number;
};
for (const scenario of SCENARIOS.filter((entry) => data.names.includes(entry.name))) {
  const breaches: string[] = [];
  const figures = await runScenarioImages(scenario, {
    seed: data.seed,
    stride: data.stride,
    reorderedPerBoundary: data.reorderedPerBoundary,
    tornPerWrite: data.tornPerWrite,
    onBreach: (figure, line) => breaches.push(`${figure}: ${line}`),
  });
  parentPort?.postMessage({ figures, breaches });
}
