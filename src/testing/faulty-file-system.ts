import type { FileIdentity, FileSystem, OpenMode } from '../transcript/file-system.ts';
import { fileSystemError } from './memory-file-system.ts';

/*
 * A FileSystem wrapper that records every call and injects faults by rule: fail the Nth
 * matching call with an errno (EIO, ENOSPC, …), make a write short, once or forever. Tests
 * assert that the fault fired (`fired`) as well as what the code under test did about it.
 */

/**
 * The operations of a FileSystem.
 *
 * @example
 * const rule: FaultRule = { operation: 'sync' satisfies FileSystemOperation, fault: { kind: 'error', code: 'EIO' } };
 */
export type FileSystemOperation = keyof FileSystem;

/**
 * What goes wrong.
 *
 * @example
 * const full: Fault = { kind: 'error', code: 'ENOSPC' };
 * const torn: Fault = { kind: 'short-write', bytes: 10 };
 */
export type Fault =
  /**
   * The call fails with this errno. With `afterEffect`, the real operation is performed first
   * and the error is reported anyway (a write that reached the file, a sync that may have).
   */
  | { kind: 'error'; code: string; afterEffect?: boolean }
  /** A write passes only its first `bytes` bytes (clamped) to the file and reports that count. */
  | { kind: 'short-write'; bytes: number };

/**
 * When a fault fires.
 *
 * @example
 * // The second append to the transcript reaches the file, then reports EIO, and so on after.
 * const rule: FaultRule = {
 *   operation: 'write',
 *   path: /\.jsonl$/,
 *   nth: 2,
 *   repeat: 'forever',
 *   fault: { kind: 'error', code: 'EIO', afterEffect: true },
 * };
 */
export interface FaultRule {
  operation: FileSystemOperation;
  /**
   * Only calls on this path: for descriptor operations, the path the descriptor was opened
   * with. A string matches the whole path; a RegExp or a function anything.
   */
  path?: string | RegExp | ((path: string) => boolean);
  /** Fire on the nth matching call, 1-based (default 1). */
  nth?: number;
  /** `once` (default): only the nth matching call; `forever`: it and every later one. */
  repeat?: 'once' | 'forever';
  fault: Fault;
}

/**
 * One call as the wrapper saw it.
 *
 * @example
 * const fileSystem = new FaultyFileSystem(nodeFileSystem, { rules: [] });
 * const syncs = fileSystem.calls.filter((call: CallRecord) => call.operation === 'sync');
 */
export interface CallRecord {
  /** 0-based position among all calls. */
  index: number;
  operation: FileSystemOperation;
  /** The path operated on (for descriptor operations, the one it was opened with). */
  path: string | undefined;
  fd?: number;
  mode?: OpenMode;
  /** For write: the byte count asked for; for truncate: the length; for read: the position. */
  size?: number;
  /** For write: the bytes passed in (a copy). */
  bytes?: Buffer;
  /** The fault injected into this call, if any. */
  fault?: Fault;
  outcome: 'ok' | 'error';
  /** For a failed call: its error code. */
  errorCode?: string;
}

/**
 * A fault that fired, and on which call.
 *
 * @example
 * const fileSystem = new FaultyFileSystem(nodeFileSystem, { rules: [{ operation: 'sync', fault: { kind: 'error', code: 'EIO' } }] });
 * const [fired] = fileSystem.fired;
 * console.log(fired?.call.operation, fired?.call.path);
 */
export interface FiredFault {
  rule: FaultRule;
  call: CallRecord;
}

/**
 * Options for {@link FaultyFileSystem}.
 *
 * @example
 * const options: FaultyFileSystemOptions = {
 *   keepBytes: true,
 *   beforeCall: (call) => {
 *     if (call.operation === 'rename') throw new Error('crash here');
 *   },
 * };
 */
export interface FaultyFileSystemOptions {
  rules?: FaultRule[];
  /** Keep a copy of written bytes in each call record (default false: it costs memory). */
  keepBytes?: boolean;
  /**
   * Called before every call reaches the wrapped file system (after its fault is chosen). It
   * may throw to make the call fail (a simulated crash at exactly this call), or await.
   */
  beforeCall?: (call: CallRecord) => void | Promise<void>;
}

/**
 * Wrap a FileSystem to record every call and fail the calls its rules name.
 *
 * @example
 * import assert from 'node:assert/strict';
 * import { nodeFileSystem } from 'llm-agent-revival/transcript';
 * import { FaultyFileSystem } from 'llm-agent-revival/testing';
 * const fileSystem = new FaultyFileSystem(nodeFileSystem, {
 *   rules: [{ operation: 'sync', nth: 2, fault: { kind: 'error', code: 'EIO' } }],
 * });
 * // … use it …
 * assert.equal(fileSystem.fired.length, 1);
 * assert.equal(fileSystem.count('sync'), 2);
 */
export class FaultyFileSystem implements FileSystem {
  readonly base: FileSystem;
  readonly calls: CallRecord[] = [];
  readonly fired: FiredFault[] = [];
  readonly #rules: { rule: FaultRule; matched: number }[];
  readonly #paths = new Map<number, string>();
  readonly #keepBytes: boolean;
  readonly #beforeCall: FaultyFileSystemOptions['beforeCall'];

  constructor(base: FileSystem, options: FaultyFileSystemOptions = {}) {
    this.base = base;
    this.#rules = (options.rules ?? []).map((rule) => ({ rule, matched: 0 }));
    this.#keepBytes = options.keepBytes ?? false;
    this.#beforeCall = options.beforeCall;
  }

  /** Add a rule now (for faults that should start mid-test). */
  addRule(rule: FaultRule): void {
    this.#rules.push({ rule, matched: 0 });
  }

  /** Drop every rule: later calls pass through untouched. */
  clearRules(): void {
    this.#rules.length = 0;
  }

  /** How many calls of `operation` there were, optionally only on paths `path` matches. */
  count(operation: FileSystemOperation, path?: FaultRule['path']): number {
    return this.calls.filter((call) => call.operation === operation && matchesPath(path, call.path))
      .length;
  }

  /** The calls of one operation, in order. */
  callsOf(operation: FileSystemOperation): CallRecord[] {
    return this.calls.filter((call) => call.operation === operation);
  }

  /** Forget the recorded calls (rules and their counts stay). */
  clearCalls(): void {
    this.calls.length = 0;
  }

  /** The wrapped file system's `open`, recorded, unless a rule makes it fail. */
  async open(path: string, mode: OpenMode): Promise<number> {
    const fd = await this.#run({ operation: 'open', path, mode }, () => this.base.open(path, mode));
    this.#paths.set(fd, path);
    return fd;
  }

  /** The wrapped file system's `write`, recorded, unless a rule makes it fail. */
  write(fd: number, bytes: Uint8Array): Promise<number> {
    const call: Partial<CallRecord> = { operation: 'write', fd, size: bytes.length };
    if (this.#keepBytes) call.bytes = Buffer.from(bytes);
    return this.#run(
      call,
      () => this.base.write(fd, bytes),
      (fault) => {
        const count = Math.max(0, Math.min(bytes.length, fault.bytes));
        return this.base.write(fd, bytes.subarray(0, count));
      },
    );
  }

  /** The wrapped file system's `read`, recorded, unless a rule makes it fail. */
  read(fd: number, buffer: Uint8Array, position: number): Promise<number> {
    return this.#run({ operation: 'read', fd, size: position }, () =>
      this.base.read(fd, buffer, position),
    );
  }

  /** The wrapped file system's `sync`, recorded, unless a rule makes it fail. */
  sync(fd: number): Promise<void> {
    return this.#run({ operation: 'sync', fd }, () => this.base.sync(fd));
  }

  /** The wrapped file system's `truncate`, recorded, unless a rule makes it fail. */
  truncate(fd: number, length: number): Promise<void> {
    return this.#run({ operation: 'truncate', fd, size: length }, () =>
      this.base.truncate(fd, length),
    );
  }

  /** The wrapped file system's `size`, recorded, unless a rule makes it fail. */
  size(fd: number): Promise<number> {
    return this.#run({ operation: 'size', fd }, () => this.base.size(fd));
  }

  /** The wrapped file system's `close`, recorded, unless a rule makes it fail. */
  async close(fd: number): Promise<void> {
    await this.#run({ operation: 'close', fd }, () => this.base.close(fd));
    this.#paths.delete(fd);
  }

  /** The wrapped file system's `rename`, recorded, unless a rule makes it fail. */
  rename(from: string, to: string): Promise<void> {
    return this.#run({ operation: 'rename', path: from }, () => this.base.rename(from, to));
  }

  /** The wrapped file system's `syncFolder`, recorded, unless a rule makes it fail. */
  syncFolder(path: string): Promise<void> {
    return this.#run({ operation: 'syncFolder', path }, () => this.base.syncFolder(path));
  }

  /** The wrapped file system's `makeFolder`, recorded, unless a rule makes it fail. */
  makeFolder(path: string): Promise<string | undefined> {
    return this.#run({ operation: 'makeFolder', path }, () => this.base.makeFolder(path));
  }

  /** The wrapped file system's `identity`, recorded, unless a rule makes it fail. */
  identity(fd: number): Promise<FileIdentity> {
    return this.#run({ operation: 'identity', fd }, () => this.base.identity(fd));
  }

  /** The wrapped file system's `identityOf`, recorded, unless a rule makes it fail. */
  identityOf(path: string): Promise<FileIdentity | null> {
    return this.#run({ operation: 'identityOf', path }, () => this.base.identityOf(path));
  }

  /** The wrapped file system's `unlink`, recorded, unless a rule makes it fail. */
  unlink(path: string): Promise<void> {
    return this.#run({ operation: 'unlink', path }, () => this.base.unlink(path));
  }

  /** Synchronous like the interface; an `error` rule throws, `afterEffect` after locking. */
  tryLock(fd: number): boolean {
    const call = this.#begin({ operation: 'tryLock', fd });
    const fault = call.fault;
    try {
      if (fault?.kind === 'error' && fault.afterEffect !== true) {
        throw fileSystemError(fault.code, 'fcntl', call.path);
      }
      const locked = this.base.tryLock(fd);
      if (fault?.kind === 'error') throw fileSystemError(fault.code, 'fcntl', call.path);
      return locked;
    } catch (error) {
      call.outcome = 'error';
      call.errorCode = (error as NodeJS.ErrnoException).code ?? 'unknown';
      throw error;
    }
  }

  /** The wrapped file system's `isLocked`, recorded, unless a rule makes it fail. */
  isLocked(path: string): Promise<boolean> {
    return this.#run({ operation: 'isLocked', path }, () => this.base.isLocked(path));
  }

  #begin(partial: Partial<CallRecord>): CallRecord {
    const operation = partial.operation as FileSystemOperation;
    const path =
      partial.path ?? (partial.fd === undefined ? undefined : this.#paths.get(partial.fd));
    const call: CallRecord = {
      ...partial,
      index: this.calls.length,
      operation,
      path,
      outcome: 'ok',
    };
    this.calls.push(call);
    for (const entry of this.#rules) {
      const { rule } = entry;
      if (rule.operation !== operation || !matchesPath(rule.path, path)) continue;
      entry.matched += 1;
      const nth = rule.nth ?? 1;
      const fires = rule.repeat === 'forever' ? entry.matched >= nth : entry.matched === nth;
      if (fires && call.fault === undefined) {
        call.fault = rule.fault;
        this.fired.push({ rule, call });
      }
    }
    return call;
  }

  async #run<T>(
    partial: Partial<CallRecord>,
    operation: () => Promise<T>,
    shortWrite?: (fault: { kind: 'short-write'; bytes: number }) => Promise<T>,
  ): Promise<T> {
    const call = this.#begin(partial);
    try {
      await this.#beforeCall?.(call);
      const fault = call.fault;
      if (fault === undefined) return await operation();
      if (fault.kind === 'short-write') {
        if (shortWrite === undefined) throw new TypeError('a short-write fault needs a write');
        return await shortWrite(fault);
      }
      if (fault.afterEffect === true) await operation();
      throw fileSystemError(fault.code, syscallOf(call.operation), call.path);
    } catch (error) {
      call.outcome = 'error';
      call.errorCode = (error as NodeJS.ErrnoException).code ?? 'unknown';
      throw error;
    }
  }
}

function matchesPath(filter: FaultRule['path'], path: string | undefined): boolean {
  if (filter === undefined) return true;
  if (path === undefined) return false;
  if (typeof filter === 'string') return filter === path;
  if (filter instanceof RegExp) return filter.test(path);
  return filter(path);
}

function syscallOf(operation: FileSystemOperation): string {
  const names: Partial<Record<FileSystemOperation, string>> = {
    sync: 'fdatasync',
    truncate: 'ftruncate',
    size: 'fstat',
    syncFolder: 'fsync',
    makeFolder: 'mkdir',
    identity: 'fstat',
    identityOf: 'lstat',
  };
  return names[operation] ?? operation;
}
