import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { buildReport, REPORT, reportDifference } from '../../scripts/api-report.ts';

/* The API report (api/public-api.txt) is current, and its check sees a change to the surface. */

test('api/public-api.txt is the public API of the source as it is', () => {
  const committed = readFileSync(REPORT, 'utf8');
  assert.deepEqual(reportDifference(committed, buildReport()), []);
});

test('the check sees an export added, removed or changed', () => {
  const committed = readFileSync(REPORT, 'utf8');
  const added = committed.replace(
    '## transcript/index.d.ts\n',
    '## transcript/index.d.ts\n\nexport declare const internalThing: number;\n',
  );
  assert.deepEqual(reportDifference(committed, added), [
    '+ export declare const internalThing: number;',
  ]);
  const line = committed.split('\n').find((text) => text.startsWith('export { Loop }'));
  assert.ok(line !== undefined, 'the report lists the Loop');
  assert.deepEqual(reportDifference(committed, committed.replace(`${line}\n`, '')), [`- ${line}`]);
});
