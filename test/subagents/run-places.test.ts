import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TranscriptStore } from '../../src/store/transcript-store.ts';
import { filePlaces, storePlaces } from '../../src/subagents/run-places.ts';

/* Where a Composer's runs live: the store shell's names are its tree; the file shell is the layout. */

// The store shell names and walks runs without asking the store anything.
const places = storePlaces({} as TranscriptStore);

test('store places: a child is <parent>.agents/<id>; its link is relative, and it leads back', () => {
  const child = places.childOf('main.agents/a', 'b');
  assert.equal(child, 'main.agents/a.agents/b');
  const link = places.parentLink(child, 'main.agents/a');
  assert.equal(link, '../a.jsonl');
  assert.equal(places.followLink(child, link), 'main.agents/a');
  assert.throws(() => places.childOf('main', '../x'), TypeError, 'an unsafe id names no run');
});

test('store places: the name is the tree — a link that disagrees cannot move a run up or down a level', async () => {
  const child = 'main.agents/a.agents/b';
  assert.equal(places.followLink(child, '../../../x.jsonl'), 'main.agents/a');
  assert.equal(await places.depthOf(child, () => undefined), 2);
  assert.equal(await places.depthOf(child, (key) => (key === 'main.agents/a' ? 5 : undefined)), 6);
  assert.equal(await places.depthOf('main', () => undefined), 0);
});

test('file places: the X.agents/<id>.jsonl layout, keyed by absolute path', () => {
  const files = filePlaces({});
  assert.equal(files.childOf('runs/main.jsonl', 'a'), 'runs/main.agents/a.jsonl');
  assert.equal(files.parentOf('runs/main.agents/a.jsonl'), 'runs/main.jsonl');
  assert.equal(files.keyOf('runs/../runs/main.jsonl'), files.keyOf('runs/main.jsonl'));
  assert.equal(files.parentLink('runs/main.agents/a.jsonl', 'runs/main.jsonl'), '../main.jsonl');
});
