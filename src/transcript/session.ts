import { dirname, join } from 'node:path';
import { mayHoldDispatch, typeMayDispatch } from './classify-tail.ts';
import { type FileSystem, nodeFileSystem } from './file-system.ts';
import { findLastCheckpoint } from './last-checkpoint.ts';
import { encodeLine, encodeReadableLine } from './line-codec.ts';
import {
  type ForeignRecord,
  type RecordBody,
  recordVersion,
  type SessionMetaBody,
  type TailRepair,
  type TranscriptRecord,
} from './records.ts';
import { repairTornTail, sidecarName } from './repair-torn-tail.ts';
import { type LineInfo, type ScanStart, scanTranscript } from './scan-transcript.ts';
import {
  describeError,
  sessionIo as io,
  TranscriptError,
  type TranscriptErrorCode,
} from './transcript-error.ts';
import { emptyTailState, foldTailState, type TailState, tailStateToJson } from './tail-state.ts';
import { WriterCore } from './writer-core.ts';
import { acquireWriterLock, describeHolder, type WriterLock } from './writer-lock.ts';

/**
 * How hard a session works to keep what it appends:
 * - `fsync` (default): every append is written at once and each barrier ends in one
 *   fdatasync — survives a power cut;
 * - `flush`: every append is written at once, barriers sync nothing — survives the process's
 *   death, not the machine's;
 * - `none`: appends wait in memory and are written at barriers — fastest, loses what came
 *   after the last barrier if the process dies.
 *
 * @example
 * await Session.create(path, meta, { durability: 'flush' });
 */
export type Durability = 'fsync' | 'flush' | 'none';

/**
 * Options shared by {@link Session.create} and {@link Session.open}.
 *
 * @example
 * const options: SessionOptions = { durability: 'fsync', clock: () => new Date() };
 */
export interface SessionOptions {
  durability?: Durability;
  fileSystem?: FileSystem;
  /** The clock that stamps `at`; tests pass a fixed one. */
  clock?: () => Date;
  /**
   * Write a checkpoint after this many bytes of other records (default 32 KiB: a reader folds at
   * most that much after the last one, and a checkpoint of a few hundred bytes costs ~1–2%).
   */
  checkpointBytes?: number;
  /**
   * Folders that must each be a real folder — not a symbolic link, not anything else — when
   * they exist, top first: a child transcript's `*.agents` folders, so that nothing inside a
   * run tree can redirect a write out of it. Checked (lstat, never following a link) before
   * anything is created or opened, and again once the transcript is open; `create` makes the
   * missing ones (mode 0700). A violation throws `unreadable` naming the folder.
   */
  realFolders?: readonly string[];
}

/**
 * Options of {@link Session.open}.
 *
 * @example
 * const types: string[] = [];
 * const session = await Session.open(path, { onRecord: (record) => types.push(record.type) });
 */
export interface SessionOpenOptions extends SessionOptions {
  /**
   * Called with every good record in file order while `open` reads the transcript (not for a
   * torn tail, nor for the checkpoint a repair writes): a caller that needs the records — a
   * revive building the conversation view — reads the file once instead of twice. Records of a
   * transcript found damaged further on have been passed by the time `open` throws. It must
   * not throw.
   */
  onRecord?: (record: TranscriptRecord | ForeignRecord, info: LineInfo) => void;
  /**
   * Salvage damage that ends the transcript — newline-terminated bad lines after the last good
   * record, which may be durable records changed since (bit rot, an edit) and so are refused
   * by default: their bytes are moved to a sidecar as a torn tail's are, and every call of the
   * last assistant turn without a settle counts as dispatched (answered as interrupted by a
   * revive, never run). Damage followed by good records is never salvaged.
   */
  salvageDamagedTail?: boolean;
  /**
   * Start from the last checkpoint when its state says compactions removed records from the
   * conversation: fold from there, reading only the records after it, as a tail read does, so
   * opening a long run costs what its end costs. The records before the checkpoint are not
   * read: damage among them goes unseen (a full check — `llm-agent status --verify` — reads
   * them). Without a compaction, or a checkpoint, every record is read as usual.
   * {@link Session.openedFromCheckpoint} says which happened.
   */
  startFromCompactedCheckpoint?: boolean;
}

/**
 * The fields of a `session-meta` record.
 *
 * @example
 * const meta: SessionMeta = { agentId: 'main', agentType: 'main', label: 'Main', model: 'openai:gpt-5' };
 */
export type SessionMeta = Omit<SessionMetaBody, 'type'>;

const DEFAULT_CHECKPOINT_BYTES = 32 * 1024;
/**
 * Bytes per backward read while looking for the checkpoint an open may start from: the writer
 * puts one every {@link DEFAULT_CHECKPOINT_BYTES}, so the first read almost always holds it.
 */
const CHECKPOINT_SEARCH_BYTES = 64 * 1024;

/**
 * The single writer of one transcript. It holds the transcript's writer lock for its whole
 * life, appends one line per record with one write, and makes them durable at barriers.
 * Appends are serialised: concurrent calls never interleave or reorder, and each resolves only
 * once its line is written. A failed write or sync poisons the session: every later call is
 * refused, and the transcript must be reopened (which repairs a torn tail).
 *
 * @example
 * const session = await Session.create('runs/a.jsonl', {
 *   agentId: 'main', agentType: 'main', label: 'main', model: 'openai:gpt-5',
 * });
 * await session.append({ type: 'message', role: 'user', content: [{ type: 'text', text: 'Hi' }] });
 * await session.barrier();
 * await session.close();
 */
export class Session {
  readonly path: string;
  readonly durability: Durability;
  readonly #fileSystem: FileSystem;
  readonly #clock: () => Date;
  readonly #lock: WriterLock;
  readonly #fd: number;
  #nextSeq: number;
  #state: TailState;
  /** The queue, the poison latch, closing and when a checkpoint is due: shared by every writer. */
  readonly #core: WriterCore;
  #unsynced = false;
  #buffered: Buffer[] = [];
  #tailRepair: TailRepair | undefined;
  /**
   * The seq of the checkpoint `open` started from ({@link SessionOpenOptions.startFromCompactedCheckpoint}),
   * or null when it read every record (or the session was created).
   */
  readonly openedFromCheckpoint: number | null;

  private constructor(init: {
    path: string;
    lock: WriterLock;
    state: TailState;
    options: SessionOptions;
    openedFromCheckpoint?: number;
  }) {
    this.path = init.path;
    this.openedFromCheckpoint = init.openedFromCheckpoint ?? null;
    this.#fd = init.lock.fd;
    this.#lock = init.lock;
    this.#state = init.state;
    this.#nextSeq = init.state.lastSeq + 1;
    this.durability = init.options.durability ?? 'fsync';
    this.#fileSystem = init.options.fileSystem ?? nodeFileSystem;
    this.#clock = init.options.clock ?? (() => new Date());
    this.#core = new WriterCore(
      init.path,
      init.options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES,
      'session',
    );
  }

  /**
   * Create a new transcript (mode 0600, its folder 0700) whose first record is its
   * `session-meta`, durable — with its folder entry — before this resolves. The file is
   * created exclusively (O_CREAT|O_EXCL, never through a symbolic link) and locked at once
   * through that descriptor. Throws a {@link TranscriptError} (`exists`, `locked`, `unreadable`
   * for a folder of `realFolders` that is not a real folder, `io`).
   */
  static async create(
    path: string,
    meta: SessionMeta,
    options: SessionOptions = {},
  ): Promise<Session> {
    const fileSystem = options.fileSystem ?? nodeFileSystem;
    const clock = options.clock ?? (() => new Date());
    const folder = dirname(path);
    await checkRealFolders(fileSystem, path, options.realFolders);
    const created = await io(path, 'create the folder', () => fileSystem.makeFolder(folder));
    if (created !== undefined && (options.durability ?? 'fsync') === 'fsync') {
      // Each new folder's entry lives in its parent: sync the parent of every folder made (the
      // transcript's own folder is synced once the file is in it).
      for (const parent of foldersBetween(dirname(created), dirname(folder))) {
        await io(path, 'sync the new folder', () => fileSystem.syncFolder(parent));
      }
    }
    const lock = await takeLock(fileSystem, path, clock(), true);
    const session = new Session({ path, lock, state: emptyTailState(), options });
    try {
      await checkRealFolders(fileSystem, path, options.realFolders);
      await session.append({ type: 'session-meta', ...meta });
      await session.barrier();
      if (session.durability === 'fsync') {
        await io(path, 'sync its folder', () => fileSystem.syncFolder(folder));
      }
    } catch (error) {
      await session.close().catch(() => undefined);
      throw error;
    }
    return session;
  }

  /**
   * Open an existing transcript for appending: open it (read-write, never through a symbolic
   * link: a path that is one is refused — pass the real path), check it is a regular file, take
   * its writer lock on that descriptor, then read it whole and repair a torn tail through the
   * same descriptor (its bytes copied to a sidecar, the file truncated to the last good record
   * and synced, the repair named in a checkpoint written at once). Damage anywhere else is
   * never repaired: it throws `unreadable` with the line and reason, and nothing is written —
   * unless it ends the file and `salvageDamagedTail` asks for it to be cut off the same way.
   */
  static async open(path: string, options: SessionOpenOptions = {}): Promise<Session> {
    const fileSystem = options.fileSystem ?? nodeFileSystem;
    const clock = options.clock ?? (() => new Date());
    await checkRealFolders(fileSystem, path, options.realFolders);
    const lock = await takeLock(fileSystem, path, clock(), false);
    try {
      await checkRealFolders(fileSystem, path, options.realFolders);
      await proveOwnership(lock, path);
      await refuseOtherNames(fileSystem, lock.fd, path);
      let state = emptyTailState();
      let start: ScanStart | undefined;
      const from =
        options.startFromCompactedCheckpoint === true
          ? await findLastCheckpoint(fileSystem, lock.fd, CHECKPOINT_SEARCH_BYTES)
          : null;
      if (from !== null && (from.state.compacted?.length ?? 0) > 0) {
        state = foldTailState(from.state, from.record, from.length);
        start = { offset: from.offset + from.length, seq: from.seq + 1, line: from.seq + 2 };
      }
      const scan = await scanTranscript(path, {
        fileSystem,
        fd: lock.fd,
        ...(start === undefined ? {} : { start }),
        onRecord: (record, info) => {
          state = foldTailState(state, record, info.length);
          options.onRecord?.(record, info);
        },
      });
      let repair: TailRepair | undefined;
      if (!scan.ok && scan.salvage !== undefined && options.salvageDamagedTail === true) {
        const { validBytes, badBytes, lines } = scan.salvage;
        const cut = await repairTornTail(fileSystem, path, lock.fd, validBytes, badBytes);
        repair = { ...cut, possiblyDispatched: true };
        if (lines > 0) repair.wholeLines = lines;
      } else if (!scan.ok) {
        const code = scan.reason === 'io-error' ? 'io' : 'unreadable';
        throw new TranscriptError(
          code,
          path,
          scan.detail,
          scan.line === undefined ? {} : { line: scan.line },
        );
      }
      if (scan.ok && scan.state === 'torn-tail' && scan.torn !== undefined) {
        const cut = await repairTornTail(
          fileSystem,
          path,
          lock.fd,
          scan.torn.validBytes,
          scan.torn.tornBytes,
        );
        repair = cut;
        // The cut bytes may be a durable dispatch cut short (a flipped newline, a truncation):
        // its call is never taken for one that did not start. So may the bytes of an earlier
        // repair at this length whose record was torn in turn (they are in its sidecar).
        const earlier = await unrecordedRepair(fileSystem, path, {
          validBytes: scan.torn.validBytes,
          lastSeq: scan.lastSeq,
        });
        if (typeMayDispatch(scan.torn.declaredType) || earlier?.possiblyDispatched === true) {
          repair = { ...cut, possiblyDispatched: true };
        }
      }
      if (scan.ok && scan.state === 'clean' && scan.validBytes > 0) {
        repair = await unrecordedRepair(fileSystem, path, scan);
      }
      const session = new Session({
        path,
        lock,
        state,
        options,
        ...(start === undefined ? {} : { openedFromCheckpoint: start.seq - 1 }),
      });
      if (repair !== undefined) {
        try {
          session.#tailRepair = repair;
          await session.#appendCheckpoint();
          await session.barrier();
        } catch (error) {
          await session.close().catch(() => undefined);
          throw error;
        }
      }
      return session;
    } catch (error) {
      await lock.release().catch(() => undefined);
      throw error;
    }
  }

  /** The folded state of everything appended so far (see {@link TailState}). */
  get state(): TailState {
    return this.#state;
  }

  /** The seq of the last record appended, -1 for none. */
  get lastSeq(): number {
    return this.#nextSeq - 1;
  }

  /**
   * True once a write or sync failed, or the file at the path stopped being the one this
   * session writes (`ownership-lost`): the session refuses everything.
   */
  get poisoned(): boolean {
    return this.#core.poisoned;
  }

  /**
   * Append one record. Its seq and time are assigned now, in call order; it resolves once the
   * line is written (under `none`: once it is buffered). Durability comes at {@link barrier}.
   * Throws a {@link TranscriptError} (`poisoned`, `closed`) — and a TypeError, before touching
   * the file, for a body JSON cannot hold or a reader would refuse (a transcript this session
   * writes is always one its readers can read).
   */
  append(body: RecordBody): Promise<TranscriptRecord> {
    this.#core.assertUsable();
    return this.#append(body, true);
  }

  #append(body: RecordBody, check = false): Promise<TranscriptRecord> {
    const header: Parameters<typeof encodeLine>[0] = {
      v: recordVersion(body),
      seq: this.#nextSeq,
      at: this.#clock().toISOString(),
    };
    if (this.#tailRepair !== undefined) header.tailRepair = this.#tailRepair;
    let line: ReturnType<typeof encodeLine>;
    try {
      line = check ? encodeReadableLine(header, body) : encodeLine(header, body);
    } catch (error) {
      throw error instanceof TypeError
        ? new TypeError(`${this.path}: not appended, ${error.message}`)
        : error;
    }
    this.#nextSeq += 1;
    this.#tailRepair = undefined;
    this.#state = foldTailState(this.#state, line.record, line.bytes.length);
    const written = this.#core.enqueue(() => this.#write(line.bytes)).then(() => line.record);
    if (this.#core.counted(body.type, line.bytes.length)) {
      void this.#appendCheckpoint().catch(() => undefined);
    }
    return written;
  }

  /**
   * A durability barrier: everything appended before it is written and, under `fsync`,
   * synced (one fdatasync however many records) before this resolves. First it proves that
   * the file at the path is still the file this session holds (one fstat and one lstat); if
   * not, it throws `ownership-lost` and the session never writes again.
   */
  barrier(): Promise<void> {
    this.#core.assertUsable();
    return this.#barrier();
  }

  #barrier(): Promise<void> {
    return this.#core.enqueue(async () => {
      await this.#proveOwnership();
      await this.#flushBuffered();
      if (this.durability === 'fsync' && this.#unsynced) {
        await this.#guard('sync', () => this.#fileSystem.sync(this.#fd));
        this.#unsynced = false;
      }
    });
  }

  /** Append a record and make it durable: `append` then `barrier`. */
  async appendDurable(body: RecordBody): Promise<TranscriptRecord> {
    return this.#core.appendDurable(
      () => this.append(body),
      () => this.barrier(),
    );
  }

  /**
   * A closing checkpoint, a barrier, then release the descriptor and the writer lock. From the
   * call on, the session refuses appends and barriers (`closed`); calling it again, even before
   * the first call has finished, returns the same promise. A poisoned session is closed without
   * writing anything. Never rejects for a failed write or sync: the session is poisoned (see
   * {@link poisoned}) and the lock released.
   *
   * The closing checkpoint is written when this session appended records since its last one
   * and the transcript holds a conversation: a transcript closed this way ends with its whole
   * state, so a reader (`inspect`, `status`) folds nothing. It is what the writer would have
   * checkpointed anyway, early; a run that dies without closing simply lacks it.
   */
  close(): Promise<void> {
    return this.#core.close(
      () => this.#state,
      () => this.#appendCheckpoint(),
      () => this.#barrier(),
      // Releasing removes the nametag, then closes the transcript's descriptor (dropping the lock).
      () => this.#lock.release(),
    );
  }

  async #write(bytes: Buffer): Promise<void> {
    if (this.durability === 'none') {
      this.#buffered.push(bytes);
      return;
    }
    await this.#writeAll(bytes);
  }

  async #flushBuffered(): Promise<void> {
    if (this.#buffered.length === 0) return;
    const bytes = Buffer.concat(this.#buffered);
    this.#buffered = [];
    await this.#writeAll(bytes);
  }

  async #writeAll(bytes: Buffer): Promise<void> {
    const written = await this.#guard('write', () => this.#fileSystem.write(this.#fd, bytes));
    this.#unsynced = true;
    if (written !== bytes.length) {
      throw this.#poison(`short write (${written} of ${bytes.length} bytes)`, undefined);
    }
  }

  async #proveOwnership(): Promise<void> {
    let lost: string | null;
    try {
      lost = await this.#lock.lost();
    } catch (error) {
      throw this.#poison(`cannot check the transcript's identity (${describeError(error)})`, error);
    }
    if (lost === null) return;
    throw this.#core.fail(ownershipLost(this.path, lost));
  }

  async #guard<T>(what: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw this.#poison(`${what} failed (${describeError(error)})`, error);
    }
  }

  #poison(reason: string, cause: unknown): TranscriptError {
    return this.#core.fail(
      new TranscriptError(
        'poisoned',
        this.path,
        `${this.path}: ${reason}; the session refuses further appends and must be reopened`,
        { cause },
      ),
    );
  }

  async #appendCheckpoint(): Promise<void> {
    this.#core.checkpointStarted();
    await this.#append({ type: 'checkpoint', state: tailStateToJson(this.#state) });
  }
}

/**
 * A repair that cut the file at `validBytes` and was interrupted before its record was
 * written (or whose record was torn in turn): a sidecar named for that length exists — the
 * first, or a later one (`…-2`, `…-3`) when an earlier repair at the same length kept other
 * bytes — yet nothing good follows that length. Its record is written now, naming the last of
 * them, and when any may hold a dispatch its calls are marked so: they are never run. A sidecar
 * that exists but cannot be read refuses the open (`io`, naming it): what it holds may be a
 * dispatch, and guessing "no" could run a side effect twice.
 */
async function unrecordedRepair(
  fileSystem: FileSystem,
  path: string,
  scan: { validBytes: number; lastSeq: number },
): Promise<TailRepair | undefined> {
  let repair: TailRepair | undefined;
  let dispatch = false;
  for (let attempt = 1; attempt <= MAX_SIDECARS; attempt++) {
    const sidecar = sidecarName(path, scan.validBytes, attempt);
    const sidecarPath = join(dirname(path), sidecar);
    let fd: number;
    try {
      fd = await fileSystem.open(sidecarPath, 'read');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
      throw unreadableSidecar(path, sidecarPath, error);
    }
    try {
      const tornBytes = await fileSystem.size(fd);
      if (tornBytes === 0) continue;
      const head = Buffer.alloc(Math.min(tornBytes, 64));
      const read = await fileSystem.read(fd, head, 0);
      repair = { validBytes: scan.validBytes, tornBytes, sidecar };
      // The same rule as the repair that was interrupted: the cut bytes are in the sidecar.
      if (mayHoldDispatch(head.subarray(0, read), scan.lastSeq + 1)) dispatch = true;
    } catch (error) {
      throw unreadableSidecar(path, sidecarPath, error);
    } finally {
      await fileSystem.close(fd).catch(() => undefined);
    }
  }
  if (repair !== undefined && dispatch) repair.possiblyDispatched = true;
  return repair;
}

/** The most sidecars of one length a repair looks at (each was one interrupted repair). */
const MAX_SIDECARS = 1000;

function unreadableSidecar(path: string, sidecar: string, error: unknown): TranscriptError {
  const cause = (error as NodeJS.ErrnoException).code ?? String(error);
  return new TranscriptError(
    'io',
    path,
    `${path}: cannot read ${sidecar}, the bytes an earlier repair cut off (${cause}); they may hold a tool's dispatch, so the transcript is not opened until that file can be read`,
    { cause: error },
  );
}

async function takeLock(
  fileSystem: FileSystem,
  path: string,
  now: Date,
  create: boolean,
): Promise<WriterLock> {
  let result: Awaited<ReturnType<typeof acquireWriterLock>>;
  try {
    result = await acquireWriterLock(fileSystem, path, now, { create });
  } catch (error) {
    throw refusedOpen(path, error, create);
  }
  if (!result.ok) {
    throw new TranscriptError(
      'locked',
      path,
      `${path}: another writer holds this transcript (${describeHolder(result.holder)})`,
      { holder: result.holder },
    );
  }
  return result.lock;
}

/** Why opening (or creating) the transcript itself failed, as a TranscriptError. */
function refusedOpen(path: string, error: unknown, create: boolean): TranscriptError {
  const code = (error as NodeJS.ErrnoException).code;
  const refuse = (sessionCode: TranscriptErrorCode, detail: string) =>
    new TranscriptError(sessionCode, path, `${path}: ${detail}`, { cause: error });
  if (create && code === 'EEXIST') return refuse('exists', 'a transcript already exists here');
  if (code === 'ELOOP') {
    return refuse(
      'unreadable',
      'is a symbolic link; a session never writes through one — pass the real path',
    );
  }
  if (code === 'ENOENT' && !create) return refuse('unreadable', 'no such file');
  if (code === 'EISDIR') return refuse('unreadable', 'is a folder, not a transcript');
  if (code === 'ENOTREG') return refuse('unreadable', 'is not a regular file');
  const what = create ? 'create' : 'open for writing';
  return refuse('io', `cannot ${what} (${describeError(error)})`);
}

/** Throw `ownership-lost` unless the path still names the file `lock` holds. */
async function proveOwnership(lock: WriterLock, path: string): Promise<void> {
  const lost = await io(path, "check the transcript's identity", () => lock.lost());
  if (lost !== null) throw ownershipLost(path, lost);
}

/**
 * Refuse a transcript that has other names (hard links): appending to it would change the file
 * under every name, and another name may lie outside the run tree (a link made from elsewhere,
 * on purpose or by a backup tool) — so no write through the tree reaches a file outside it.
 */
async function refuseOtherNames(fileSystem: FileSystem, fd: number, path: string): Promise<void> {
  const identity = await io(path, "check the transcript's identity", () => fileSystem.identity(fd));
  if (identity.links <= 1) return;
  throw new TranscriptError(
    'unreadable',
    path,
    `${path}: the transcript has ${identity.links} names (hard links); a transcript is only written under one, so that no write reaches a file outside the run tree through another name — remove the other links (or copy the file) and try again; nothing was written`,
  );
}

function ownershipLost(path: string, what: string): TranscriptError {
  return new TranscriptError(
    'ownership-lost',
    path,
    `${path}: the transcript ${what} since this session took it; the session stopped writing ` +
      'and refuses further appends (nothing it writes can reach the file now at the path)',
  );
}

/**
 * Refuse unless every folder of `folders` that exists is a real folder (lstat: not a symbolic
 * link, not a file). A missing one is fine: `create` makes it, and below a missing folder
 * nothing exists.
 */
async function checkRealFolders(
  fileSystem: FileSystem,
  path: string,
  folders: readonly string[] | undefined,
): Promise<void> {
  for (const folder of folders ?? []) {
    const found = await io(path, `look at ${folder}`, () => fileSystem.identityOf(folder));
    if (found === null) return;
    if (found.kind !== 'folder') {
      const what = found.kind === 'symlink' ? 'a symbolic link' : 'not a folder';
      throw new TranscriptError(
        'unreadable',
        path,
        `${path}: ${folder} is ${what}; a run tree's folders must be real folders, so nothing in the tree can redirect a write out of it`,
      );
    }
  }
}

/** Every folder from `top` down to `bottom` (both included), `top` first. */
function foldersBetween(top: string, bottom: string): string[] {
  const folders: string[] = [];
  for (let at = bottom; ; at = dirname(at)) {
    folders.unshift(at);
    if (at === top || dirname(at) === at) return folders;
  }
}
