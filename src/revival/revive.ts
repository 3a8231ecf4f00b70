import { agentsLayout, type ChildLayout, layoutFoldersOf } from '../subagents/child-layout.ts';
import type { ViewMessage } from '../transcript/conversation-view.ts';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import type {
  ForeignRecord,
  RecordOf,
  RunRevivedBody,
  TranscriptRecord,
} from '../transcript/records.ts';
import { type LineInfo, scanRecords } from '../transcript/scan-transcript.ts';
import { scanUncompacted } from '../transcript/scan-uncompacted.ts';
import { Session, type SessionOpenOptions } from '../transcript/session.ts';
import { describeError, TranscriptError } from '../transcript/transcript-error.ts';
import type { TailState } from '../transcript/tail-state.ts';
import type { TreeClaim } from '../transcript/tree-claim.ts';
import { ViewLineIndex } from '../transcript/view-line-index.ts';
import { inspectTranscript } from './inspect.ts';
import type { NeverDispatchedCall, NotRevivableReason, PendingJoin } from './inspection.ts';
import type { Reconciliation } from './reconcile-calls.ts';
import { refused } from './revive-refused.ts';
import { reviveRun } from './revive-run.ts';
import { RunTail } from './run-tail.ts';
import { joinTreeClaim } from './shared-tree-claim.ts';
import { findTreeRoot } from './tree-root.ts';
import { VerifiedUnderClaim } from './verified-under-claim.ts';
import type { VerdictFields } from './verdict-agreement.ts';

/**
 * Which transcript to revive: a path (revive opens it) or a session the caller holds.
 *
 * @example
 * const target: ReviveTarget = { path: 'runs/a.jsonl' };
 */
export type ReviveTarget = { path: string; session?: never } | { session: Session; path?: never };

/**
 * What {@link reviveTranscript} is asked.
 *
 * @example
 * const options: ReviveOptions = { path: 'runs/a.jsonl', agentId: 'main', maxRevivals: 2 };
 */
export type ReviveOptions = ReviveTarget & {
  /** The agent the caller means to revive; a transcript whose session-meta names another is refused. */
  agentId: string;
  /** How many revivals the application allows this transcript (0 refuses every revival). */
  maxRevivals: number;
  /** Used to read the transcript, and to open it when given a path. */
  fileSystem?: FileSystem;
  /**
   * Where the application keeps a run's children ({@link ChildLayout}; `X.agents/<id>.jsonl`
   * by default): how revive finds the tree's root, and so its claim, and the children pending
   * joins wait for.
   */
  layout?: ChildLayout;
  /** Stamps `at` on what revive writes; tests pass a fixed one. */
  clock?: () => Date;
  /** For the session opened from a path (durability, checkpoint interval). */
  sessionOptions?: Omit<SessionOpenOptions, 'fileSystem' | 'clock' | 'onRecord'>;
  /**
   * A claim the caller holds on this transcript's tree ({@link Revival.claimTree}): revive
   * works under it and leaves it held — how an application reviving several runs of one tree
   * holds the tree for all of them. Without it, revive claims the tree itself (refusing,
   * `running`, when another process holds it) and releases the claim when the revived session
   * closes, or before it answers a refusal; a second revive of the same tree in this process
   * joins that claim, which is released when the last of their sessions closes. A claim on another tree, or one already released,
   * is a programmer error (TypeError).
   */
  treeClaim?: TreeClaim;
  /**
   * Salvage damage that ends the transcript (see `SessionOpenOptions.salvageDamagedTail`): its
   * bytes go to a sidecar and every call of the last turn without a settle is answered as
   * interrupted, never run. Without it such a transcript is refused as `unreadable`.
   */
  salvageDamagedTail?: boolean;
  /**
   * What tools' reconciles answered about this run's calls in flight
   * ({@link Revival.reconcile}, asked before the revive — and before anyone confirmed it). Each
   * answer settles the call it names if its idempotency key is the dispatch's; every other call
   * in flight is answered as interrupted. Nothing is ever run again.
   */
  reconciled?: readonly Reconciliation[];
};

/**
 * Why a revive wrote nothing, or stopped: the transcript's reasons, plus `io-error` — the file
 * system refused a write mid-revive; the transcript is then as a crash would have left it, and
 * the next revive completes the work without doubling any of it.
 *
 * @example
 * if (!revived.ok && revived.reason === 'io-error') console.error('try again:', revived.detail);
 */
export type ReviveFailureReason = NotRevivableReason | 'io-error';

/**
 * A revived run: everything needed to start it again as itself.
 *
 * @example
 * if (revived.ok) new Loop({ backends, writer: revived.session }).run(revived.messages);
 */
export interface Revived {
  ok: true;
  /**
   * Holds the writer lock; hand it to the Loop (and close it when the run ends). When revive
   * took the tree claim itself, closing the session releases the claim too.
   */
  session: Session;
  /** The claim the tree was revived under: the caller's, or the one revive took. */
  treeClaim: TreeClaim;
  /** The conversation view to run from, the revival's own turns included. */
  messages: ViewMessage[];
  agentId: string;
  agentType: string;
  label: string;
  path: string;
  /** The `run-revived` envelope this revive wrote. */
  revival: RecordOf<'run-revived'>;
  /** Call ids answered (now or by an unfinished earlier revive) as interrupted. */
  interrupted: string[];
  /** What each reconcile asked answered (as the envelope records it). */
  reconciled: NonNullable<RunRevivedBody['reconciled']>;
  /** Joins left open: the Loop waits for their children under these call ids. */
  pendingJoins: PendingJoin[];
  /** Calls of the last turn that never started: the Loop runs them (it is not a retry). */
  neverDispatched: NeverDispatchedCall[];
  /**
   * A parent link revive did not follow, in one line (the run's `session-meta` names a parent
   * that is not the one its layout gives): the run was revived in its layout's tree, or as the
   * root of its own tree when its layout gives it no parent.
   */
  unfollowedLink?: string;
}

/**
 * A revive that did not happen (or stopped); `detail` is one line for a human.
 *
 * @example
 * if (!revived.ok) console.error(`not revived: ${revived.reason}: ${revived.detail}`);
 */
export interface ReviveRefused {
  ok: false;
  reason: ReviveFailureReason;
  detail: string;
}

/**
 * Revive one transcript (see {@link Revival.revive}).
 *
 * @example
 * const revived = await reviveTranscript({ path: 'runs/a.jsonl', agentId: 'main', maxRevivals: 2 });
 * if (revived.ok) new Loop({ backends, writer: revived.session }).run(revived.messages);
 */
export async function reviveTranscript(options: ReviveOptions): Promise<Revived | ReviveRefused> {
  checkRequest(options);
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  const path = options.session?.path ?? (options.path as string);
  // Every link up to the root is checked before anything is claimed, read further or written:
  // a parent link to a FIFO, a device or outside the tree is refused here, never followed.
  const given = options.treeClaim;
  // Under a claim the caller holds, a root already found under it is not looked for again.
  const tree =
    given?.held === true
      ? await VerifiedUnderClaim.of(given).treeRoot(path, fileSystem, options.layout)
      : await findTreeRoot(path, fileSystem, options.layout);
  if (!tree.ok) return refused('unreadable', tree.detail);
  let claim: TreeClaim;
  // What this revive does with the claim when it is done: nothing for a claim the caller holds.
  let leave = async (): Promise<void> => undefined;
  if (given !== undefined) {
    if (!given.held || given.root !== tree.root) {
      throw new TypeError(
        `Revival.revive: treeClaim ${given.held ? `claims the tree of ${given.root}` : 'was released'}; ${path} is in the tree of ${tree.root}`,
      );
    }
    let stands: boolean;
    try {
      stands = await given.verify();
    } catch (error) {
      return refused(
        'io-error',
        `${path}: cannot check the claim of its tree (${given.path}): ${describeError(error)}`,
      );
    }
    if (!stands) {
      return refused(
        'running',
        `${path}: the claim file of its tree (${given.path}) was removed or replaced; another reviver may hold the tree now`,
      );
    }
    claim = given;
  } else {
    try {
      // The holder's `since` is for people; the injected clock stamps records only. A claim
      // another revive of this process holds on the tree is joined, not refused.
      const joined = await joinTreeClaim(fileSystem, tree.root, new Date());
      if (!joined.ok) return refused('running', `${path}: ${joined.detail}`);
      claim = joined.claim;
      leave = joined.leave;
    } catch (error) {
      return refused('io-error', `${path}: cannot claim its tree (${describeError(error)})`);
    }
  }
  let revived: Omit<Revived, 'treeClaim'> | ReviveRefused | undefined;
  try {
    revived = await reviveClaimed(path, options, fileSystem, claim);
  } finally {
    if (revived?.ok !== true) await leave().catch(() => undefined);
  }
  if (!revived.ok) return revived;
  leaveWithSession(revived.session, leave);
  return {
    ...revived,
    treeClaim: claim,
    ...(tree.unfollowed === undefined ? {} : { unfollowedLink: tree.unfollowed }),
  };
}

/** The claim revive took or joined lasts as long as the revived session: closing it leaves. */
function leaveWithSession(session: Session, leave: () => Promise<void>): void {
  const close = session.close.bind(session);
  session.close = () => close().finally(() => leave().catch(() => undefined));
}

/** Revive under a held tree claim. */
async function reviveClaimed(
  path: string,
  options: ReviveOptions,
  fileSystem: FileSystem,
  claim: TreeClaim,
): Promise<Omit<Revived, 'treeClaim'> | ReviveRefused> {
  // What was already checked under this claim is not checked again (a new claim: everything).
  const verified = VerifiedUnderClaim.of(claim);
  if (options.session !== undefined) {
    return reviveOpen(options.session, options, fileSystem, verified, null);
  }
  const before =
    verified.takeInspection(path, options.maxRevivals) ??
    (await inspectTranscript({
      path,
      maxRevivals: options.maxRevivals,
      fileSystem,
      treeClaim: claim,
      ...(options.layout === undefined ? {} : { layout: options.layout }),
    }));
  const salvage = options.salvageDamagedTail === true;
  // Damage a salvage may cut off is decided by the open below, which refuses any other.
  if (before.reason === 'unreadable' && !salvage) {
    return refused('unreadable', before.detail ?? path);
  }
  const mismatch = agentMismatch(path, before.agentId, options.agentId);
  if (mismatch !== null) return refused('unreadable', mismatch);
  // Refusals decided before opening write nothing: opening would take the lock and repair.
  if (!before.revivable && before.reason !== 'unreadable') {
    return refused(before.reason ?? 'unreadable', before.detail ?? path);
  }
  // Opening repairs a torn tail (a write): whatever refuses must refuse before it.
  const joined = await verified.joinedChildren(
    path,
    before.pendingJoins.flatMap((join) => join.agentIds),
    fileSystem,
    options.layout,
  );
  if (joined !== null) return refused('unreadable', joined);
  let session: Session;
  // Opening reads every record (damage anywhere refuses the revive): what the revive needs of
  // them is kept on the way, so the file is read once and never held whole.
  const read = new TranscriptReading();
  try {
    const sessionOptions: SessionOpenOptions = {
      ...options.sessionOptions,
      fileSystem,
      // The folders the layout made for a child must be real: none may lead the revive elsewhere.
      realFolders: layoutFoldersOf(options.layout ?? agentsLayout, path),
      onRecord: (record, info) => read.add(record, info),
      // A long run that compacted: the open reads from the last checkpoint, and the view's
      // records are read below, never the records compactions removed.
      startFromCompactedCheckpoint: true,
    };
    if (salvage) sessionOptions.salvageDamagedTail = true;
    if (options.clock !== undefined) sessionOptions.clock = options.clock;
    session = await Session.open(path, sessionOptions);
  } catch (error) {
    if (TranscriptError.isInstance(error)) {
      if (error.code === 'locked') return refused('running', error.message);
      if (error.code === 'unreadable') return refused('unreadable', error.message);
    }
    return refused('io-error', `${path}: cannot open to revive (${describeError(error)})`);
  }
  // A salvage acts on what the open cut and read, not on inspect's refusal of the damage.
  const decided = before.reason === 'unreadable' ? null : before;
  // Opened from a checkpoint, the open saw only what follows it: reviveOpen reads the rest.
  return reviveOpen(
    session,
    options,
    fileSystem,
    verified,
    session.openedFromCheckpoint === null ? read : null,
    decided,
    true,
  );
}

/**
 * What a revive keeps of the records as they stream past: where the conversation view's lines
 * lie (what survives compaction, as offsets) and the run's tail (what the planner needs) —
 * never the records themselves.
 */
class TranscriptReading {
  lines = new ViewLineIndex();
  tail = new RunTail();

  /** Take what `other` read instead of what this one holds. */
  adopt(other: TranscriptReading): void {
    this.lines = other.lines;
    this.tail = other.tail;
  }

  add(record: TranscriptRecord | ForeignRecord, info: LineInfo): void {
    this.lines.add(record, info);
    this.tail.add(record);
  }
}

/** `read` is what opening the session read, or null for a caller's session (read it now). */
async function reviveOpen(
  session: Session,
  options: ReviveOptions,
  fileSystem: FileSystem,
  verified: VerifiedUnderClaim,
  opened: TranscriptReading | null,
  decided: VerdictFields | null = null,
  ownSession = opened !== null,
): Promise<Omit<Revived, 'treeClaim'> | ReviveRefused> {
  const path = session.path;
  const release = async (): Promise<void> => {
    if (ownSession) await session.close().catch(() => undefined);
  };
  let read = opened;
  if (read === null) {
    try {
      // A caller's session may hold appends in memory (durability 'none'): read them back too.
      await session.barrier();
      read = new TranscriptReading();
      const failure = await readRecords(path, fileSystem, session.state, read);
      if (failure !== null) {
        await release();
        return refused('unreadable', failure);
      }
    } catch (error) {
      await release();
      return refused('io-error', `${path}: cannot read to revive (${describeError(error)})`);
    }
  }
  const revived = await reviveRun(
    {
      writer: session,
      tail: read.tail,
      viewRecords: async () => {
        // The view's records, read back by where they lie: at most what survived compaction.
        const kept = await (read as TranscriptReading).lines.read(path, fileSystem);
        if (kept.ok) return kept;
        return {
          ok: false,
          reason: kept.reason === 'io-error' ? 'io-error' : 'unreadable',
          detail: kept.detail,
        };
      },
      release,
      decided,
      checkJoins: (agentIds) => verified.joinedChildren(path, agentIds, fileSystem, options.layout),
      noun: 'transcript',
    },
    options,
  );
  if (!revived.ok) return revived;
  const { state } = revived;
  return {
    ok: true,
    session,
    messages: revived.messages,
    agentId: state.meta?.agentId ?? options.agentId,
    agentType: state.meta?.agentType ?? options.agentId,
    label: state.meta?.label ?? options.agentId,
    path,
    revival: revived.revival,
    interrupted: revived.interrupted,
    reconciled: revived.reconciled,
    pendingJoins: revived.pendingJoins,
    neverDispatched: revived.neverDispatched,
  };
}

/** Programmer errors only: the request itself is impossible. */
function checkRequest(options: ReviveOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('Revival.revive needs an options object');
  }
  const hasPath = options.path !== undefined;
  const hasSession = options.session !== undefined;
  if (hasPath && hasSession) {
    throw new TypeError('Revival.revive takes a path or a session, not both');
  }
  if (!hasPath && !hasSession) throw new TypeError('Revival.revive needs a path or a session');
  if (hasPath && typeof options.path !== 'string') {
    throw new TypeError('Revival.revive: path must be a string');
  }
  if (hasSession && !(options.session instanceof Session)) {
    throw new TypeError('Revival.revive: session must be a Session');
  }
  const claim = options.treeClaim as Partial<TreeClaim> | undefined;
  if (claim !== undefined && (typeof claim !== 'object' || typeof claim.release !== 'function')) {
    throw new TypeError('Revival.revive: treeClaim must be a claim from Revival.claimTree');
  }
  if (typeof options.agentId !== 'string') {
    throw new TypeError('Revival.revive: agentId must be a string');
  }
  if (typeof options.maxRevivals !== 'number') {
    throw new TypeError('Revival.revive: maxRevivals must be a number');
  }
  if (!Number.isSafeInteger(options.maxRevivals) || options.maxRevivals < 0) {
    throw new RangeError(
      `Revival.revive: maxRevivals must be a non-negative integer (got ${options.maxRevivals})`,
    );
  }
}

/**
 * Feed `read` what a revive needs of a transcript: the records no compaction removed (the
 * view's, and every one after the last compaction) when `state` knows the compactions, or
 * else every record. The reason it is unreadable, or null.
 */
async function readRecords(
  path: string,
  fileSystem: FileSystem,
  state: TailState,
  read: TranscriptReading,
): Promise<string | null> {
  if ((state.compacted?.length ?? 0) > 0) {
    const partial = new TranscriptReading();
    const iterator = scanUncompacted(path, state, { fileSystem });
    for (;;) {
      const step = await iterator.next();
      if (step.done !== true) {
        partial.add(step.value.record, step.value.info);
        continue;
      }
      if (step.value === null) break; // not located as the state says: read every record
      if (!step.value.ok) return step.value.detail;
      read.adopt(partial);
      return null;
    }
  }
  return streamRecords(path, fileSystem, read);
}

/** Feed a transcript's records to `read`, in constant memory; the reason it is unreadable, or null. */
async function streamRecords(
  path: string,
  fileSystem: FileSystem,
  read: TranscriptReading,
): Promise<string | null> {
  const iterator = scanRecords(path, { fileSystem });
  for (;;) {
    const step = await iterator.next();
    if (step.done !== true) {
      read.add(step.value.record, step.value.info);
      continue;
    }
    return step.value.ok ? null : step.value.detail;
  }
}

function agentMismatch(path: string, found: string | undefined, asked: string): string | null {
  if (found === undefined || found === asked) return null;
  return `${path}: its session-meta names agent '${found}', not '${asked}'`;
}
