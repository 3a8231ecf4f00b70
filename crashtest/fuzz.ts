import { crc32 } from 'node:zlib';
import { Revival } from '../src/revival/index.ts';
import { peek } from '../src/transcript/peek.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { newWorld } from './agents.ts';
import { RecordingFileSystem } from './recording-file-system.ts';
import { reviveTree, runTree } from './revive-tree.ts';
import { steppingClock } from './scenarios.ts';

/*
 * Malformed transcripts into `peek` and `inspect` (SQLite's malformed-file tests): byte-level
 * damage (flips, cuts, splices, zeros, junk) and structure-aware damage (a record's JSON
 * changed and its checksum recomputed, so the damage gets past the CRC to the code that reads
 * meaning). Both must answer, never throw, and never write: the file system counts every call
 * that could change something.
 */

/** The figures of a fuzz run. */
export interface FuzzFigures {
  cases: number;
  throws: number;
  writes: number;
  /** How the answers fell: peek ok / not, inspect reasons. */
  outcomes: Map<string, number>;
  milliseconds: number;
}

/** A line with a checksum that matches, whatever its JSON says. */
export function sealLine(value: unknown): Buffer {
  const json = JSON.stringify(value);
  const body = Buffer.from(json.endsWith('}') && json.length > 2 ? json.slice(0, -1) : '{"v":1');
  const crc = crc32(Buffer.from('}'), crc32(body)).toString(16).padStart(8, '0');
  return Buffer.concat([body, Buffer.from(`,"crc":"${crc}"}\n`)]);
}

/** Real transcripts to mutate: a finished tree, an interrupted one, a revived one. */
export async function fuzzCorpus(): Promise<Buffer[]> {
  const corpus: Buffer[] = [];
  const world = newWorld();
  const fileSystem = new RecordingFileSystem();
  const options = {
    fileSystem,
    world,
    durability: 'fsync' as const,
    maxRevivals: 3,
    clock: steppingClock(),
  };
  await runTree('/f/main.jsonl', 'deep', options);
  for (const path of fileSystem.listFiles())
    if (path.endsWith('.jsonl')) corpus.push(fileSystem.fileBytes(path) as Buffer);
  const revived = new RecordingFileSystem();
  const main = corpus[corpus.length - 1] as Buffer;
  const lines = splitLines(main);
  revived.putFile('/f/main.jsonl', Buffer.concat(lines.slice(0, Math.ceil(lines.length / 2))));
  corpus.push(revived.fileBytes('/f/main.jsonl') as Buffer);
  await reviveTree(['/f/main.jsonl'], { ...options, fileSystem: revived, checkpointBytes: 200 });
  corpus.push(revived.fileBytes('/f/main.jsonl') as Buffer);
  return corpus;
}

function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let end = bytes.indexOf(0x0a); end >= 0; end = bytes.indexOf(0x0a, start)) {
    lines.push(bytes.subarray(start, end + 1));
    start = end + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return lines;
}

const ODD_VALUES: unknown[] = [
  null,
  -1,
  0,
  1e308,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  'x'.repeat(300),
  '../../etc/passwd',
  [],
  {},
  [null],
  { type: 'text' },
  true,
  '\u0000',
  '\ud800',
];

function mutateValue(value: unknown, random: () => number, depth = 0): unknown {
  const pick = (items: unknown[]) => items[Math.floor(random() * items.length)];
  if (depth > 6 || random() < 0.25) return pick(ODD_VALUES);
  if (Array.isArray(value)) {
    const copy = [...value];
    if (copy.length > 0 && random() < 0.3) copy.splice(Math.floor(random() * copy.length), 1);
    else if (copy.length > 0) {
      const index = Math.floor(random() * copy.length);
      copy[index] = mutateValue(copy[index], random, depth + 1);
    } else copy.push(pick(ODD_VALUES));
    return copy;
  }
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = { ...value };
    const keys = Object.keys(copy);
    const key = keys[Math.floor(random() * keys.length)];
    if (key === undefined) return copy;
    if (random() < 0.2) delete copy[key];
    else copy[key] = mutateValue(copy[key], random, depth + 1);
    return copy;
  }
  return pick(ODD_VALUES);
}

/** One seeded mutation of a transcript. */
export function mutate(source: Buffer, random: () => number): Buffer {
  const lines = splitLines(source);
  const at = (limit: number) => Math.floor(random() * Math.max(1, limit));
  const kind = at(12);
  const bytes = Buffer.from(source);
  if (lines.length === 0 && kind >= 5) return bytes;
  switch (kind) {
    case 0: {
      const position = at(bytes.length);
      bytes[position] = (bytes[position] ?? 0) ^ (1 << at(8));
      return bytes;
    }
    case 1:
      return bytes.subarray(0, at(bytes.length));
    case 2: {
      const from = at(bytes.length);
      return Buffer.concat([bytes.subarray(0, from), bytes.subarray(from + 1 + at(64))]);
    }
    case 3: {
      const from = at(bytes.length);
      bytes.fill(0, from, Math.min(bytes.length, from + 1 + at(600)));
      return bytes;
    }
    case 4: {
      const junk = Buffer.from(Array.from({ length: 1 + at(80) }, () => at(256)));
      const from = at(bytes.length);
      return Buffer.concat([bytes.subarray(0, from), junk, bytes.subarray(from)]);
    }
    case 5: {
      const copy = [...lines];
      const index = at(copy.length);
      copy.splice(index, 0, copy[index] ?? Buffer.alloc(0));
      return Buffer.concat(copy);
    }
    case 6: {
      const copy = [...lines];
      const left = at(copy.length);
      const right = at(copy.length);
      [copy[left], copy[right]] = [copy[right] as Buffer, copy[left] as Buffer];
      return Buffer.concat(copy);
    }
    case 7: {
      const copy = [...lines];
      copy.splice(at(copy.length), 1);
      return Buffer.concat(copy);
    }
    default: {
      // Structure-aware: change a record's meaning, keep its checksum valid.
      const copy = [...lines];
      const index = kind === 8 ? copy.length - 1 : at(copy.length);
      const line = copy[index];
      if (line === undefined) return bytes;
      let value: unknown;
      try {
        value = JSON.parse(line.toString('utf8'));
      } catch {
        return bytes;
      }
      if (typeof value === 'object' && value !== null) delete (value as { crc?: unknown }).crc;
      const changed = mutateValue(value, random);
      copy[index] = sealLine(
        typeof changed === 'object' && changed !== null && !Array.isArray(changed)
          ? changed
          : value,
      );
      if (kind === 11) copy.push(sealLine(mutateValue(value, random)));
      return Buffer.concat(copy);
    }
  }
}

/**
 * Feed `cases` mutated transcripts to peek and inspect.
 *
 * @example
 * const figures = await runFuzz({ cases: 1000, seed: 1 });
 */
export async function runFuzz(options: {
  cases: number;
  seed: number;
}): Promise<FuzzFigures & { failures: string[] }> {
  const began = performance.now();
  const random = seededRandom(options.seed);
  const corpus = await fuzzCorpus();
  const figures = {
    cases: 0,
    throws: 0,
    writes: 0,
    outcomes: new Map<string, number>(),
    milliseconds: 0,
    failures: [] as string[],
  };
  const count = (key: string) => figures.outcomes.set(key, (figures.outcomes.get(key) ?? 0) + 1);
  for (let index = 0; index < options.cases; index += 1) {
    let bytes = corpus[index % corpus.length] as Buffer;
    const rounds = 1 + Math.floor(random() * 3);
    for (let round = 0; round < rounds; round += 1) bytes = mutate(bytes, random);
    const fileSystem = RecordingFileSystem.fromFiles(new Map([['/f/main.jsonl', bytes]]));
    const before = fileSystem.counts.mutating;
    figures.cases += 1;
    try {
      const read = await peek('/f/main.jsonl', { fileSystem });
      count(read.ok ? `peek ${read.state}` : `peek ${read.reason}`);
      const found = await Revival.inspect({ path: '/f/main.jsonl', maxRevivals: 2, fileSystem });
      count(found.revivable ? 'inspect revivable' : `inspect ${found.reason}`);
    } catch (error) {
      figures.throws += 1;
      if (figures.failures.length < 20)
        figures.failures.push(`case ${index}: threw ${String(error)}`);
    }
    if (fileSystem.counts.mutating !== before) {
      figures.writes += fileSystem.counts.mutating - before;
      if (figures.failures.length < 20) figures.failures.push(`case ${index}: wrote`);
    }
  }
  figures.milliseconds = Math.round(performance.now() - began);
  return figures;
}
