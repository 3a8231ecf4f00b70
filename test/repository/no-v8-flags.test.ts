import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/*
 * The library and the CLI set no V8 flag at run time: a flag is the whole process's, so a host
 * that loads the library would get it too (`status` once turned allocation-site pretenuring off;
 * docs/performance.md, goal 2, says why that is gone).
 */

const SRC = new URL('../../src/', import.meta.url).pathname;

test('no file of src/ sets a V8 flag', () => {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((name) =>
    name.endsWith('.ts'),
  );
  assert.ok(files.length > 100, `only ${files.length} files read`);
  const setting = files.filter((name) =>
    readFileSync(join(SRC, name), 'utf8').includes('setFlagsFromString'),
  );
  assert.deepEqual(setting, []);
});
