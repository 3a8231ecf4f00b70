/**
 * Goal 1 measured in a process of its own: the full parse of a 1 GiB transcript leaves a heap
 * of that size behind, and V8 goes on collecting it on the other core for a while after. In
 * the bench's own process that ran alongside the `status` section that follows, and made its
 * runs 40% slower. Arguments: a JSON object `{ sizes, dataFolder }`; writes its progress to
 * stderr and prints the rows as one JSON line.
 *
 * @example
 * node bench/inspect-child.ts '{"sizes":[10485760],"dataFolder":"bench/data"}'
 */
import { measureInspect } from './inspect.ts';

const job = JSON.parse(process.argv[2] ?? '{}') as { sizes: number[]; dataFolder: string };
const rows = await measureInspect({
  sizes: job.sizes,
  dataFolder: job.dataFolder,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify(rows)}\n`);
