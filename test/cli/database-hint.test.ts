import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseOptions } from '../../src/render/database-hint.ts';

test('a hint names the database and schema given, and never prints a password', () => {
  assert.deepEqual(databaseOptions('postgres://u@127.0.0.1:5432/app', 'fleet'), {
    args: '--database postgres://u@127.0.0.1:5432/app --schema fleet',
    masked: false,
  });
  assert.deepEqual(databaseOptions('postgres://u:s3cret@db/app', undefined), {
    args: "--database 'postgres://u:***@db/app'",
    masked: true,
  });
  const inQuery = databaseOptions('postgres://db/app?password=s3cret', undefined);
  assert.equal(inQuery.masked, true);
  assert.doesNotMatch(inQuery.args, /s3cret/);
  // A keyword string is not a URL: quoted for the shell as given.
  assert.equal(
    databaseOptions('host=db dbname=app', "it's").args,
    `--database 'host=db dbname=app' --schema 'it'\\''s'`,
  );
});
