import { dirname, posix, resolve } from 'node:path';
import { childRunName, parentRunName } from '../store/child-run-name.ts';
import type { StoreRead, TranscriptStore } from '../store/transcript-store.ts';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import { peek } from '../transcript/peek.ts';
import { Session, type SessionMeta, type SessionOptions } from '../transcript/session.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import {
  agentsFoldersOf,
  childTranscriptPath,
  parentLinkPath,
  parentTranscriptPath,
} from './child-layout.ts';
import { depthOf } from './child-transcript.ts';

/**
 * Where a Composer's runs live, by location: a transcript's path (the file layout,
 * `X.agents/<id>.jsonl`) or a run's name in a {@link TranscriptStore} (`X.agents/<id>`). The
 * Composer decides; this says where and does the I/O, so the same tree logic serves files and
 * any store.
 *
 * @example
 * const places = storePlaces(store);
 * const writer = await places.create(places.childOf('main', 'worker-1'), meta);
 */
export interface RunPlaces {
  /** Where child `agentId` of the run at `parent` lives; a TypeError for an unsafe id. */
  childOf(parent: string, agentId: string): string;
  /** The parent of the run at `location` by the layout, or null for a root. */
  parentOf(location: string): string | null;
  /** One key per run, whatever spelling of its location (a relative path, say) is given. */
  keyOf(location: string): string;
  /** The link a child's `session-meta` records to its parent: relative, so a tree can move. */
  parentLink(child: string, parent: string): string;
  /** The parent a child's `session-meta` link names (in a store, the name it is under). */
  followLink(child: string, link: string): string;
  /** Start the run at `location`, owned by the caller. */
  create(location: string, meta: SessionMeta): Promise<TranscriptWriter>;
  /** Every record of the run, checked; never throws, never writes. */
  read(location: string): Promise<StoreRead>;
  /** Whether a live writer holds it now (a hint). */
  held(location: string): Promise<boolean>;
  /** How deep the run is: `known` depths first, then along its parent links. */
  depthOf(location: string, known: (key: string) => number | undefined): Promise<number>;
}

/**
 * Runs as transcript files laid out `X.agents/<id>.jsonl` — each child's `*.agents` folders
 * required to be real folders, so nothing inside a tree can redirect a write out of it.
 *
 * @example
 * const places = filePlaces({ durability: 'fsync' });
 * places.childOf('runs/main.jsonl', 'worker-1'); // 'runs/main.agents/worker-1.jsonl'
 */
export function filePlaces(options: SessionOptions): RunPlaces {
  const fileSystem: FileSystem = options.fileSystem ?? nodeFileSystem;
  const peekOptions = options.fileSystem === undefined ? {} : { fileSystem: options.fileSystem };
  return {
    childOf: childTranscriptPath,
    parentOf: parentTranscriptPath,
    keyOf: (location) => resolve(location),
    parentLink: parentLinkPath,
    followLink: (child, link) => resolve(dirname(resolve(child)), link),
    create: (location, meta) =>
      Session.create(location, meta, { ...options, realFolders: agentsFoldersOf(location) }),
    async read(location) {
      const found = await peek(location, peekOptions);
      if (found.ok) return { ok: true, records: found.records, tornBytes: 0 };
      return {
        ok: false,
        reason: found.reason === 'missing' ? 'missing' : 'unreadable',
        detail: found.detail,
      };
    },
    held: (location) => fileSystem.isLocked(location),
    depthOf: (location, known) => depthOf(location, known, options.fileSystem),
  };
}

/**
 * Runs of a {@link TranscriptStore}, named `<parent>.agents/<agent id>` (the names the fleet's
 * children have too), so a tree is one family in `status --database` whichever built it.
 *
 * @example
 * const places = storePlaces(store);
 * places.childOf('main', 'worker-1'); // 'main.agents/worker-1'
 */
export function storePlaces(store: TranscriptStore): RunPlaces {
  return {
    childOf: childRunName,
    parentOf: parentRunName,
    keyOf: (location) => location,
    parentLink: (child, parent) => posix.relative(posix.dirname(child), `${parent}.jsonl`),
    // In a store the name is the tree: a child's parent is the name it is under, whatever its
    // link says (an imported or edited link cannot move it up or down a level).
    followLink: (child, link) => {
      const named = parentRunName(child);
      if (named !== null) return named;
      const path = posix.join(posix.dirname(child), link);
      return path.endsWith('.jsonl') ? path.slice(0, -'.jsonl'.length) : path;
    },
    create: (location, meta) => store.create(location, meta),
    read: (location) => store.read(location),
    held: (location) => store.held(location),
    async depthOf(location, known) {
      let depth = 0;
      for (let at: string | null = location; at !== null; at = parentRunName(at)) {
        const found = known(at);
        if (found !== undefined) return found + depth;
        if (parentRunName(at) === null) return depth;
        depth += 1;
      }
      return depth;
    },
  };
}
