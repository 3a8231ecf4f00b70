import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SectionCache } from '../../src/ui/section-cache.ts';

test('a section is rendered again only when its transcript changed, asked differently, or evicted', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'section-cache-'));
  try {
    const paths = ['a', 'b', 'c'].map((name) => join(folder, `${name}.jsonl`));
    for (const path of paths) await writeFile(path, '{}\n');
    const [a, b, c] = paths as [string, string, string];
    const cache = new SectionCache(2);
    let renders = 0;
    const render = (text: string) => async () => {
      renders += 1;
      return text;
    };
    assert.equal(await cache.get(a, 'page 1', render('a1')), 'a1');
    assert.equal(await cache.get(a, 'page 1', render('other')), 'a1', 'unchanged: from the cache');
    assert.equal(renders, 1);
    assert.equal(
      await cache.get(a, 'page 2', render('a2')),
      'a2',
      'another page is another section',
    );
    await appendFile(a, '{}\n');
    assert.equal(
      await cache.get(a, 'page 1', render('a1 longer')),
      'a1 longer',
      'appended to: rendered again',
    );
    assert.equal(renders, 3);
    // Two entries kept: a's page 1 (fresh) and a's page 2; b and c push the oldest out.
    await cache.get(b, 'page 1', render('b1'));
    await cache.get(c, 'page 1', render('c1'));
    assert.equal(await cache.get(a, 'page 1', render('a1 again')), 'a1 again', 'evicted');
    assert.equal(await cache.get(c, 'page 1', render('never')), 'c1', 'the most recent is kept');
    assert.equal(await cache.get(join(folder, 'gone.jsonl'), 'page 1', render('x')), 'x');
    assert.equal(
      await cache.get(join(folder, 'gone.jsonl'), 'page 1', render('y')),
      'y',
      'no file: never cached',
    );
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
