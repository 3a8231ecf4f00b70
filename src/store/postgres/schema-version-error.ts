import type { SCHEMA_VERSION } from './migrations.ts';

/**
 * Why a store would not start on the database's schema: older (run `llm-agent db migrate`)
 * or newer (written by a newer llm-agent) than {@link SCHEMA_VERSION}.
 *
 * @example
 * if (error instanceof SchemaVersionError && error.found < SCHEMA_VERSION) console.error('run: llm-agent db migrate');
 */
export class SchemaVersionError extends Error {
  readonly found: number;
  constructor(found: number, message: string) {
    super(message);
    this.name = 'SchemaVersionError';
    this.found = found;
  }
}
