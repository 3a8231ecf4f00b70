import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import { peek } from '../transcript/peek.ts';
import { Session, type SessionMeta, type SessionOptions } from '../transcript/session.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import { isRunName } from './child-run-name.ts';
import type { StoreRead, TranscriptStore } from './transcript-store.ts';

/**
 * A folder of transcripts, one file per run (`<folder>/<run>.jsonl`): the store of one
 * machine, where ownership is the kernel's lock on the transcript itself and a barrier is an
 * fsync (see {@link Session}). Run names are agent ids (letters, digits, `.`, `_`, `-`), and a
 * child's name is its parent's with `.agents/<agent id>` after it ({@link childRunName}): child
 * `a` of run `main` is `<folder>/main.agents/a.jsonl`, the layout the `Composer` writes, each
 * `*.agents` folder required to be a real folder (not a link out of the tree).
 *
 * @example
 * const store = new FileStore('runs');
 * const writer = await store.create('main', meta);
 * await writer.close();
 * const found = await store.read('main');
 */
export class FileStore implements TranscriptStore {
  readonly kind = 'file';
  readonly folder: string;
  readonly #options: SessionOptions;

  constructor(folder: string, options: SessionOptions = {}) {
    this.folder = folder;
    this.#options = options;
  }

  /** The transcript file of `run`. */
  pathOf(run: string): string {
    if (!isRunName(run)) {
      throw new TypeError(
        `FileStore: ${JSON.stringify(run)} is not a run name: an agent id (1 to 64 letters, digits, '.', '_' or '-', from a letter or digit) or <run>.agents/<agent id>`,
      );
    }
    return join(this.folder, `${run}.jsonl`);
  }

  /** The writer's options for `run`: a child's `*.agents` folders must be real folders. */
  #optionsFor(run: string): SessionOptions {
    const segments = run.split('/');
    const realFolders = segments
      .slice(0, -1)
      .map((_, index) => join(this.folder, ...segments.slice(0, index + 1)));
    return realFolders.length === 0 ? this.#options : { ...this.#options, realFolders };
  }

  /** A new transcript `<folder>/<run>.jsonl`, locked by its writer ({@link Session.create}). */
  async create(run: string, meta: SessionMeta): Promise<TranscriptWriter> {
    const path = this.pathOf(run);
    return Session.create(path, meta, this.#optionsFor(run));
  }

  /** The run's transcript opened for appending: its torn tail repaired, its lock taken ({@link Session.open}). */
  async open(run: string): Promise<TranscriptWriter> {
    const path = this.pathOf(run);
    return Session.open(path, this.#optionsFor(run));
  }

  /** Every record, read without a lock and without writing ({@link peek}). */
  async read(run: string): Promise<StoreRead> {
    if (!isRunName(run))
      return { ok: false, reason: 'missing', detail: `${JSON.stringify(run)} is not a run name` };
    const path = this.pathOf(run);
    const found = await peek(
      path,
      this.#options.fileSystem === undefined ? {} : { fileSystem: this.#options.fileSystem },
    );
    if (!found.ok) {
      return {
        ok: false,
        reason: found.reason === 'missing' ? 'missing' : 'unreadable',
        detail: found.detail,
      };
    }
    return { ok: true, records: found.records, tornBytes: found.torn?.tornBytes ?? 0 };
  }

  /** The transcript's bytes up to its last record. */
  async exportBytes(run: string): Promise<Buffer> {
    const path = this.pathOf(run);
    const found = await peek(
      path,
      this.#options.fileSystem === undefined ? {} : { fileSystem: this.#options.fileSystem },
    );
    if (!found.ok) throw new Error(found.detail);
    const bytes = await readFile(path);
    // What the records hold, without a torn last line.
    return bytes.subarray(0, found.validBytes);
  }

  /** Whether a process holds the transcript's lock now ({@link FileSystem.isLocked}). */
  async held(run: string): Promise<boolean> {
    if (!isRunName(run)) return false;
    return (this.#options.fileSystem ?? nodeFileSystem).isLocked(this.pathOf(run));
  }

  /**
   * The runs of the folder: its `*.jsonl` files named as run names — roots, and children in
   * their `*.agents` folders (as the PostgreSQL store lists children too). Only a real folder
   * named after a run (`<run>.agents`) is entered, never a link, at most 64 levels down; a
   * child folder that vanishes or cannot be read meanwhile is skipped, not the whole list.
   */
  async list(): Promise<string[]> {
    const runs: string[] = [];
    const pending: { folder: string; prefix: string }[] = [{ folder: this.folder, prefix: '' }];
    for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
      let entries: Dirent[];
      try {
        entries = await readdir(item.folder, { withFileTypes: true });
      } catch (error) {
        // Only the store's own folder missing means "no runs"; anything else about it is a
        // failure to say, and a child folder gone or closed meanwhile leaves the others.
        if (item.prefix !== '') continue;
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      for (const entry of entries) {
        const name = `${item.prefix}${entry.name}`;
        if (entry.isFile() && name.endsWith('.jsonl')) {
          const run = name.slice(0, -'.jsonl'.length);
          if (isRunName(run)) runs.push(run);
        } else if (entry.isDirectory() && entry.name.endsWith('.agents')) {
          const parent = name.slice(0, -'.agents'.length);
          if (isRunName(parent) && name.split('/').length < 64) {
            pending.push({ folder: join(item.folder, entry.name), prefix: `${name}/` });
          }
        }
      }
    }
    return runs.sort();
  }

  /** Nothing to release: each writer holds its own lock. */
  async close(): Promise<void> {
    // Nothing is held between calls: each writer holds its own lock.
  }
}
