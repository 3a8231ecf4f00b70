import { dirname, resolve } from 'node:path';
import { agentsLayout, type ChildLayout } from '../subagents/child-layout.ts';
import type { FileSystem } from '../transcript/file-system.ts';
import type { SessionMetaBody } from '../transcript/records.ts';
import { scanRecords } from '../transcript/scan-transcript.ts';

/**
 * The root of a transcript's tree, or why it cannot be trusted.
 *
 * @example
 * const found: TreeRoot = await findTreeRoot('/runs/main.agents/a.jsonl', nodeFileSystem);
 * if (found.ok) console.log(found.root); // '/runs/main.jsonl'
 */
export type TreeRoot =
  | {
      ok: true;
      /** The root transcript: the topmost ancestor by the layout that is a regular file. */
      root: string;
      /** The transcript asked about, then each ancestor up to the root. */
      chain: string[];
      /**
       * A parent link that was not followed, in one line: a `session-meta` naming a parent that
       * is not the one the layout gives (outside the tree, a FIFO, a device). The tree is the
       * layout's, and a run the layout gives no parent is the root of its own tree; the run is
       * never refused for its link.
       */
      unfollowed?: string;
    }
  | { ok: false; detail: string };

/** A tree deeper than this is not one this package wrote (its depth limit is far lower). */
const MAX_DEPTH = 64;

/**
 * Find the root of the tree `path` belongs to, checking every link on the way: from the
 * transcript up through its parents by `layout` (by default `P.agents/c.jsonl` → `P.jsonl`),
 * each of which
 * must be a regular file (looked at without following a symlink, before anything is read from
 * it, so a FIFO or a device never blocks the walk). The tree is the layout's: a `session-meta`
 * that names another parent — outside the tree, a FIFO, `/dev/zero` — is never followed, and is
 * reported (`unfollowed`) rather than refused; a run the layout gives no parent is the root of
 * its own tree whatever its link says. The walk stops at the first ancestor that does not
 * exist. Reads one line per level; never writes; never throws for a transcript's content
 * (I/O errors other than a missing file are answered as refusals too).
 *
 * @example
 * const found = await findTreeRoot('/runs/main.agents/a.agents/b.jsonl', nodeFileSystem);
 * // { ok: true, root: '/runs/main.jsonl', chain: [b, a, main] }
 */
export async function findTreeRoot(
  path: string,
  fileSystem: FileSystem,
  layout: ChildLayout = agentsLayout,
): Promise<TreeRoot> {
  let current = resolve(path);
  const chain: string[] = [];
  let unfollowed: string | undefined;
  try {
    for (let depth = 0; depth <= MAX_DEPTH; depth += 1) {
      const identity = await fileSystem.identityOf(current);
      if (identity === null) {
        if (depth === 0) return { ok: false, detail: `${current}: no such transcript` };
        break;
      }
      if (identity.kind !== 'file') {
        return {
          ok: false,
          detail:
            depth === 0
              ? `${current}: not a regular file (${identity.kind})`
              : `${chain.at(-1)}: its parent transcript ${current} is not a regular file (${identity.kind})`,
        };
      }
      chain.push(current);
      const layoutParent = parentOf(layout, current);
      const meta = await readMeta(current, fileSystem);
      const link = meta?.parent;
      if (link !== undefined && unfollowed === undefined) {
        const named =
          typeof link.transcript === 'string' ? resolve(dirname(current), link.transcript) : null;
        if (named === null || named !== layoutParent) {
          unfollowed = `${current}: its session-meta names the parent transcript ${JSON.stringify(
            String(link.transcript).slice(0, 200),
          )}, which is not ${
            layoutParent === null
              ? `in a tree (its layout gives it no parent); the link is not followed, and it is the root of its own tree`
              : `its parent in this tree (${layoutParent}); the link is not followed, and the tree is the layout's`
          }`;
        }
      }
      if (layoutParent === null) {
        return {
          ok: true,
          root: current,
          chain,
          ...(unfollowed === undefined ? {} : { unfollowed }),
        };
      }
      current = layoutParent;
    }
  } catch (error) {
    return {
      ok: false,
      detail: `${current}: cannot check the tree's links (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  const last = chain.at(-1);
  if (last === undefined || chain.length > MAX_DEPTH) {
    return { ok: false, detail: `${resolve(path)}: the tree is deeper than ${MAX_DEPTH} levels` };
  }
  return { ok: true, root: last, chain, ...(unfollowed === undefined ? {} : { unfollowed }) };
}

/** The first record when it is a session-meta: read in small pieces, not the scan's megabyte. */
async function readMeta(path: string, fileSystem: FileSystem): Promise<SessionMetaBody | null> {
  const iterator = scanRecords(path, { fileSystem, chunkBytes: 4096 });
  try {
    const step = await iterator.next();
    if (step.done === true || step.value.record.type !== 'session-meta') return null;
    return step.value.record as unknown as SessionMetaBody;
  } finally {
    await iterator.return(undefined as never).catch(() => undefined);
  }
}

/**
 * The transcripts that may be the root of `path`'s tree by layout alone — itself, its layout
 * parent, that one's, … — without reading anything. A tree claim is held beside one of them.
 *
 * @example
 * layoutAncestors('/runs/main.agents/a.jsonl'); // ['/runs/main.agents/a.jsonl', '/runs/main.jsonl']
 */
export function layoutAncestors(path: string, layout: ChildLayout = agentsLayout): string[] {
  const ancestors: string[] = [];
  for (
    let at: string | null = resolve(path);
    at !== null && ancestors.length <= MAX_DEPTH;
    at = parentOf(layout, at)
  ) {
    ancestors.push(at);
  }
  return ancestors;
}

/**
 * Why the children a transcript's pending joins wait for cannot be read safely, or null: each
 * child's transcript (where `layout` puts it; by default `X.agents/<id>.jsonl`) must be a regular file or missing (a missing child
 * is answered as such). A FIFO, a device, a symlink or a folder there is refused before anything
 * is written — reading one could block, or read outside the tree. Looks without following
 * symlinks and reads nothing.
 *
 * @example
 * const problem = await checkJoinedChildren('/runs/main.jsonl', ['worker-1'], nodeFileSystem);
 * if (problem !== null) console.error(problem);
 */
export async function checkJoinedChildren(
  path: string,
  agentIds: readonly string[],
  fileSystem: FileSystem,
  layout: ChildLayout = agentsLayout,
): Promise<string | null> {
  for (const agentId of agentIds) {
    let child: string;
    try {
      child = resolve(layout.childOf(path, agentId));
    } catch {
      return `${path}: a pending join waits for ${JSON.stringify(agentId.slice(0, 100))}, which cannot name a child transcript`;
    }
    try {
      const identity = await fileSystem.identityOf(child);
      if (identity !== null && identity.kind !== 'file') {
        return `${path}: the transcript of child ${agentId} (${child}) is not a regular file (${identity.kind})`;
      }
    } catch (error) {
      return `${path}: cannot look at the transcript of child ${agentId} (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  return null;
}

/** The layout's parent of `path`, resolved; null for a root (or an answer that is no path). */
function parentOf(layout: ChildLayout, path: string): string | null {
  const parent = layout.parentOf(path);
  return typeof parent === 'string' ? resolve(parent) : null;
}
