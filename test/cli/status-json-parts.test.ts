import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { statusJson } from '../../src/render/format-status.ts';
import { serializeJson } from '../../src/render/json-text.ts';
import { type RunNode, stateOf } from '../../src/render/run-node.ts';
import {
  type StatusJsonPart,
  statusJsonFromParts,
  statusJsonPart,
} from '../../src/render/status-json-parts.ts';
import { assessTail } from '../../src/revival/assess-tail.ts';
import { unreadableInspection } from '../../src/revival/inspect.ts';
import { writeChunked } from '../../src/runs/chunked-write.ts';
import { forestOf } from '../../src/runs/database-status.ts';
import { emptyTailState, foldTailState } from '../../src/transcript/tail-state.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';

/*
 * `status --database --json` keeps each run as its own line of JSON and writes the tree from
 * those lines: the text must be the one `JSON.stringify(statusJson(roots))` makes of the same
 * tree — for any forest (children in order, runs whose parent is elsewhere at the top, runs no
 * root leads to left out), hostile strings, a tree deeper than `JSON.stringify` goes — and the
 * chunks it is written in must join to the pieces, whatever their characters.
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

/** `count` runs with random parents (some outside the runs, one its own), as the store lists them. */
function randomRuns(seed: number, count: number): { names: string[]; parents: (string | null)[] } {
  const random = seededRandom(seed);
  const names = Array.from({ length: count }, (_, index) => `run-${index}-${HOSTILE}`);
  const parents = names.map((name, index) => {
    const roll = random();
    if (roll < 0.4 || index === 0) return null;
    if (roll < 0.45) return 'not-in-the-store';
    if (roll < 0.47) return name;
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

function fromParts(names: string[], parents: (string | null)[], parts: StatusJsonPart[]) {
  const pieces = statusJsonFromParts(parts, forestOf(names, parents), 3);
  const texts: string[] = [];
  for (let next = pieces.next(); ; next = pieces.next()) {
    if (next.done === true) return { text: texts.join(''), summary: next.value };
    texts.push(next.value);
  }
}

test('random forests: the same text as JSON.stringify of statusJson, the same summary', () => {
  const seed = testSeed('status-json-parts');
  for (let round = 0; round < 40; round += 1) {
    const { names, parents } = randomRuns(seed + round, 1 + (round % 13) * 7);
    const nodes = names.map((name, index) => node(name, index + round));
    const parts = nodes.map(statusJsonPart);
    const whole = statusJson(treeOf(names, parents, nodes), 3);
    const made = fromParts(names, parents, parts);
    assert.equal(made.text, JSON.stringify(whole), `seed ${seed + round}`);
    assert.deepEqual(made.summary, whole.summary);
  }
});

test('no runs, and runs with no parent at all: the same text', () => {
  assert.equal(fromParts([], [], []).text, JSON.stringify(statusJson([], 3)));
  const names = ['a', 'b', 'c'];
  const nodes = names.map((name, index) => node(name, index));
  const made = fromParts(names, [null, null, null], nodes.map(statusJsonPart));
  assert.equal(made.text, JSON.stringify(statusJson(nodes, 3)));
});

test('a tree nested deeper than JSON.stringify can go: the text serializeJson makes', () => {
  const names = Array.from({ length: 3_001 }, (_, index) => `d${index}`);
  const parents = names.map((_, index) => (index === 0 ? null : `d${index - 1}`));
  const nodes = names.map((name, index) => node(name, index));
  const parts = nodes.map(statusJsonPart);
  const whole = statusJson(treeOf(names, parents, nodes), 3);
  assert.throws(() => JSON.stringify(whole), RangeError, 'the depth is real');
  assert.equal(fromParts(names, parents, parts).text, serializeJson(whole));
});

test('written in chunks: the bytes of the pieces joined, whatever their characters and sizes', () => {
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
    const returned = writeChunked(
      out,
      (function* () {
        yield* pieces;
        return 'the end';
      })(),
      chunkBytes,
    );
    assert.equal(returned, 'the end');
    assert.equal(
      Buffer.concat(written).toString('utf8'),
      pieces.join(''),
      `chunks of ${chunkBytes}`,
    );
    if (chunkBytes === 64) assert.ok(written.length > 100, `${written.length} writes`);
  }
});
