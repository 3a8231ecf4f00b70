import type { Pool } from 'pg';
import { SCHEMA_VERSION, schemaVersion } from './migrations.ts';
import { SchemaVersionError } from './schema-version-error.ts';
import { databaseLabel, withClient } from './store-context.ts';

/**
 * Throw a {@link SchemaVersionError} unless the schema is the version this store reads and
 * writes.
 *
 * @example
 * await assertSchemaVersion(pool, 'postgres://127.0.0.1/agents', 'llm_agent');
 */
export async function assertSchemaVersion(
  pool: Pool,
  connectionString: string,
  schema: string,
): Promise<void> {
  const version = await withClient(pool, (client) => schemaVersion(client, schema));
  const where = `${databaseLabel(connectionString)}: the schema "${schema}" is at version ${version}`;
  if (version < SCHEMA_VERSION) {
    throw new SchemaVersionError(
      version,
      `${where}, this llm-agent needs ${SCHEMA_VERSION}: run llm-agent db migrate --database URL`,
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new SchemaVersionError(
      version,
      `${where}, newer than this llm-agent's ${SCHEMA_VERSION}: use a newer llm-agent`,
    );
  }
}
