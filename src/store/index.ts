/**
 * `llm-agent-revival/store`: where runs' transcripts live. {@link FileStore} keeps a folder
 * of JSONL files on one machine; {@link PostgresStore} keeps runs in PostgreSQL for many
 * workers, with fenced leases (it needs the optional `pg` package). Both hand out a
 * {@link TranscriptWriter} the loop writes through, and keep one contract (docs/store.md).
 *
 * @example
 * import { PostgresStore } from 'llm-agent-revival/store';
 * const store = await PostgresStore.connect({ connectionString: process.env.DATABASE_URL ?? '' });
 *
 * @module
 */
export type { TranscriptWriter } from '../transcript/transcript-writer.ts';
export { FileStore } from './file-store.ts';
export { SCHEMA_VERSION } from './postgres/migrations.ts';
export {
  PostgresStore,
  type PostgresStoreOptions,
  SchemaVersionError,
} from './postgres/postgres-store.ts';
export type { StoreRead, TranscriptStore } from './transcript-store.ts';
