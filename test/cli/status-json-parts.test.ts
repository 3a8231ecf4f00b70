import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { statusJson } from '../../src/render/format-status.ts';
import { serializeJson } from '../../src/render/json-text.ts';
import { type RunNode, stateOf } from '../../src/render/run-node.ts';
import {
  type StatusJsonPart,
  StatusJsonStream,
  statusJsonPart,
} from '../../src/render/status-json-parts.ts';
import { assessTail } from '../../src/revival/assess-tail.ts';
import { unreadableInspection } from '../../src/revival/inspect.ts';
import { ChunkedText } from '../../src/runs/chunked-text.ts';
import { emptyTailState, foldTailState } from '../../src/transcript/tail-state.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';

/*
 * `status --database --json` writes each tree at the top as soon as all its runs have come,
 * from each run's own line of JSON: the text must be the one `JSON.stringify(statusJson(roots))`
 * makes of the same tree — for any forest, whatever order children and parents come in, runs
 * decided late, runs in a loop of parents (left out), hostile strings, a tree deeper than
 * `JSON.stringify` goes — a tree must be written once complete and not before, and the chunks
 * it is written in must join to the pieces, whatever their characters.
 */

const HOSTILE = '\u2028"\\</script>"children":[]\u{1f600}';

/** A run in one of the states status shows, some with open calls, a halt or a database hold. */
function node(path: string, kind: number): RunNode {
  if (kind % 5 === 0) {
    const inspection = unreadableInspection(path, 3, `${path}: cannot read ${HOSTILE}`);
    return { path, displayPath: path, state: stateOf(inspection), inspection, children: [] };
  }
  let state = emptyTailState();
  const records = [
    { type: 'session-meta', agentId: `a${kind}`, agentType: 't', label: HOSTILE, model: 'm' },
    { type: 'message', role: 'user', content: [{ type: 'text', text: 'go' }] },
    {
      type: 'message',
      role: 'assistant',
      content:
        kind % 5 === 1
          ? [{ type: 'text', text: 'done' }]
          : [
              { type: 'tool-call', callId: 'c1', toolName: 'deploy', input: {} },
              { type: 'tool-call', callId: 'c2', toolName: HOSTILE, input: {} },
            ],
    },
    ...(kind % 5 === 3
      ? [{ type: 'tool-dispatched', callId: 'c1', toolName: 'deploy', idempotency: 'side-effect' }]
      : []),
    ...(kind % 5 === 4 ? [{ type: 'run-stopped', reason: `stopped ${HOSTILE}` }] : []),
  ];
  records.forEach((record, seq) => {
    state = foldTailState(
      state,
      { v: 2, seq, at: '2026-12-06T00:00:00.000Z', ...record } as never,
      90,
    );
  });
  const inspection = {
    path,
    bytes: 100 + kind,
    ...assessTail(state, { maxRevivals: 3, running: kind % 7 === 2 }),
  };
  const built: RunNode = {
    path,
    displayPath: path,
    state: stateOf(inspection),
    inspection,
    children: [],
  };
  if (kind % 2 === 0) {
    built.database = {
      owner: kind % 4 === 0 ? null : `w${kind}`,
      epoch: kind,
      leaseExpires: null,
      leaseExpired: kind % 3 === 0,
      status: 'open',
    };
  }
  return built;
}

/**
 * `count` runs in name order with random parents among them (the store's foreign key: a parent
 * is always a run), some their own or in a loop.
 */
function randomRuns(seed: number, count: number): { names: string[]; parents: (string | null)[] } {
  const random = seededRandom(seed);
  const names = Array.from(
    { length: count },
    (_, index) => `run-${String(index).padStart(4, '0')}-${HOSTILE}`,
  );
  const parents = names.map((name, index) => {
    const roll = random();
    if (roll < 0.4 || index === 0) return null;
    if (roll < 0.43) return name;
    return names[Math.floor(random() * count)] as string;
  });
  return { names, parents };
}

/** The tree `databaseTree` makes of the same runs: children pushed under their parent's node. */
function treeOf(names: string[], parents: (string | null)[], nodes: RunNode[]): RunNode[] {
  const byName = new Map(names.map((name, index) => [name, nodes[index] as RunNode]));
  const roots: RunNode[] = [];
  names.forEach((_, index) => {
    const parent = parents[index] === null ? undefined : byName.get(parents[index] as string);
    if (parent === undefined) roots.push(nodes[index] as RunNode);
    else parent.children.push(nodes[index] as RunNode);
  });
  return roots;
}

/** The stream's text for runs added in order, those in `late` decided after all have come. */
function streamed(
  names: string[],
  parents: (string | null)[],
  parts: StatusJsonPart[],
  late: ReadonlySet<number> = new Set(),
) {
  const pieces: string[] = [];
  const stream = new StatusJsonStream((piece) => pieces.push(piece), 3);
  const children = new Map<string, number>();
  for (const parent of parents)
    if (parent !== null) children.set(parent, (children.get(parent) ?? 0) + 1);
  names.forEach((name, index) => {
    stream.add(
      name,
      parents[index] as string | null,
      children.get(name) ?? 0,
      late.has(index) ? null : (parts[index] as StatusJsonPart),
    );
  });
  for (const index of late) stream.decided(names[index] as string, parts[index] as StatusJsonPart);
  const summary = stream.end();
  return { text: pieces.join(''), summary };
}

test('random forests, some runs decided late: the same text as JSON.stringify of statusJson, the same summary', () => {
  const seed = testSeed('status-json-stream');
  for (let round = 0; round < 60; round += 1) {
    const random = seededRandom(seed + round);
    const { names, parents } = randomRuns(seed + round, 1 + (round % 13) * 7);
    const nodes = names.map((name, index) => node(name, index + round));
    const parts = nodes.map(statusJsonPart);
    const late = new Set(
      names.flatMap((_, index) => (random() < (round % 3) * 0.1 ? [index] : [])),
    );
    const whole = statusJson(treeOf(names, parents, nodes), 3);
    const made = streamed(names, parents, parts, late);
    assert.equal(made.text, JSON.stringify(whole), `seed ${seed + round}`);
    assert.deepEqual(made.summary, whole.summary);
  }
});

test('a tree is written once its last run has come, not before; a run alone at once', () => {
  const pieces: string[] = [];
  const stream = new StatusJsonStream((piece) => pieces.push(piece), 3);
  const part = (name: string) => statusJsonPart(node(name, 1));
  stream.add('a', null, 0, part('a'));
  assert.ok(pieces.join('').endsWith(part('a').text), 'a run with no children: written at once');
  stream.add('b', null, 1, part('b'));
  stream.add('b/x', 'b', 1, part('b/x'));
  stream.add('c', null, 0, part('c'));
  const before = pieces.join('');
  assert.ok(
    !before.includes('"path":"b"') && !before.includes('"path":"c"'),
    'b waits for d/y, c for b',
  );
  stream.add('d/y', 'b/x', 0, part('d/y'));
  const after = pieces.join('');
  assert.ok(
    after.includes('"path":"d/y"') && after.includes('"path":"c"'),
    'b complete: b and c written',
  );
  // A child before its parent (by name): the parent's tree is complete when the parent comes.
  stream.add('e', 'f', 0, part('e'));
  assert.ok(!pieces.join('').includes('"path":"e"'), 'e waits for f');
  stream.add('f', null, 1, part('f'));
  assert.ok(pieces.join('').includes('"path":"f"'), 'f written with e, before the end');
  stream.end();
});

test('no runs, and a run whose parent never comes: at the top, at the end', () => {
  const none = streamed([], [], []);
  assert.equal(none.text, JSON.stringify(statusJson([], 3)));
  const nodes = ['a', 'b'].map((name, index) => node(name, index));
  const made = streamed(['a', 'b'], ['elsewhere', null], nodes.map(statusJsonPart));
  assert.equal(
    made.text,
    JSON.stringify(statusJson([nodes[1] as RunNode, nodes[0] as RunNode], 3)),
  );
});

test('a tree nested deeper than JSON.stringify can go: the text serializeJson makes', () => {
  const names = Array.from({ length: 3_001 }, (_, index) => `d${String(index).padStart(5, '0')}`);
  const parents = names.map((_, index) => (index === 0 ? null : (names[index - 1] as string)));
  const nodes = names.map((name, index) => node(name, index));
  const parts = nodes.map(statusJsonPart);
  const whole = statusJson(treeOf(names, parents, nodes), 3);
  assert.throws(() => JSON.stringify(whole), RangeError, 'the depth is real');
  assert.equal(streamed(names, parents, parts).text, serializeJson(whole));
  // Children before their parents, the deepest first: one child each, so the same text.
  const reversed = streamed([...names].reverse(), [...parents].reverse(), [...parts].reverse());
  assert.equal(reversed.text, serializeJson(whole));
});

test('kept in chunks, written at the end: the bytes of the pieces joined, whatever their characters and sizes', () => {
  const random = seededRandom(testSeed('chunked-write'));
  const pieces = Array.from(
    { length: 500 },
    (_, index) => `${index}${HOSTILE.repeat(Math.floor(random() * (index % 50 === 0 ? 200 : 4)))}é`,
  );
  for (const chunkBytes of [64, 1_000, 1 << 20]) {
    const written: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        written.push(Buffer.from(chunk));
        done();
      },
    });
    const text = new ChunkedText(chunkBytes);
    for (const piece of pieces) text.write(piece);
    assert.equal(written.length, 0, 'nothing written before writeTo');
    text.writeTo(out);
    assert.equal(
      Buffer.concat(written).toString('utf8'),
      pieces.join(''),
      `chunks of ${chunkBytes}`,
    );
    if (chunkBytes === 64) assert.ok(written.length > 100, `${written.length} writes`);
  }
});
