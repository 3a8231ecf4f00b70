import { basename, dirname, join, relative, resolve } from 'node:path';
import { isAgentId } from '../transcript/records.ts';

/**
 * Where the transcript of child `agentId` of the run recorded in `parentPath` lives:
 * `X.jsonl` → `X.agents/<agentId>.jsonl`, recursively. Throws a TypeError for an agent id that
 * is not safe as a file name: nothing from model output becomes a path without this check.
 *
 * @example
 * childTranscriptPath('runs/main.jsonl', 'researcher-1'); // 'runs/main.agents/researcher-1.jsonl'
 */
export function childTranscriptPath(parentPath: string, agentId: string): string {
  if (!isAgentId(agentId)) {
    throw new TypeError(`unsafe agent id ${JSON.stringify(agentId)}: it cannot name a file`);
  }
  return join(childrenFolder(parentPath), `${agentId}.jsonl`);
}

/**
 * The folder holding the children of the run recorded in `parentPath`.
 *
 * @example
 * childrenFolder('runs/main.jsonl'); // 'runs/main.agents'
 */
export function childrenFolder(parentPath: string): string {
  const name = basename(parentPath);
  const stem = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : name;
  return join(dirname(parentPath), `${stem}.agents`);
}

/**
 * The `*.agents` folders that hold the transcript at `path`, outermost first: every folder a
 * run tree's layout made between its root transcript's folder and `path`. Each must be a real
 * folder (`Session` option `realFolders`) so that nothing inside the tree can redirect a write
 * out of it. Empty for a root transcript.
 *
 * @example
 * agentsFoldersOf('runs/main.agents/a.agents/b.jsonl'); // ['runs/main.agents', 'runs/main.agents/a.agents']
 */
export function agentsFoldersOf(path: string): string[] {
  const folders: string[] = [];
  for (let at = path; parentTranscriptPath(at) !== null; at = parentTranscriptPath(at) as string) {
    folders.unshift(dirname(at));
  }
  return folders;
}

/**
 * The parent transcript of a child transcript laid out by {@link childTranscriptPath}, or null
 * when `childPath` is not inside a `*.agents` folder.
 *
 * @example
 * parentTranscriptPath('runs/main.agents/researcher-1.jsonl'); // 'runs/main.jsonl'
 */
export function parentTranscriptPath(childPath: string): string | null {
  const folder = dirname(childPath);
  const name = basename(folder);
  if (!name.endsWith('.agents') || name === '.agents') return null;
  return join(dirname(folder), `${name.slice(0, -'.agents'.length)}.jsonl`);
}

/**
 * The parent transcript as a child's `session-meta` names it: relative to the child
 * transcript's folder, so that a tree can be moved as a whole.
 *
 * @example
 * parentLinkPath('runs/main.agents/a.jsonl', 'runs/main.jsonl'); // '../main.jsonl'
 */
export function parentLinkPath(childPath: string, parentPath: string): string {
  return relative(dirname(resolve(childPath)), resolve(parentPath));
}

/**
 * Where the children of a run live: the application's decision, not the library's. Revival
 * finds a run's tree (its root, and so the claim) by walking {@link ChildLayout.parentOf} up, and
 * the children a pending join waits for at {@link ChildLayout.childOf}; a `session-meta` parent
 * link that disagrees with the layout is reported and never followed. {@link agentsLayout}, the
 * layout the `Composer` writes (`X.agents/<agentId>.jsonl`), is the default.
 *
 * @example
 * // Every child in one flat folder beside its parent: runs/main.jsonl → runs/main--worker-1.jsonl
 * const flatLayout: ChildLayout = {
 *   childOf: (parentPath, agentId) => parentPath.replace(/\.jsonl$/, `--${agentId}.jsonl`),
 *   parentOf: (path) => (/--[^/]+\.jsonl$/.test(path) ? path.replace(/--[^/-]+\.jsonl$/, '.jsonl') : null),
 * };
 */
export interface ChildLayout {
  /**
   * The transcript of child `agentId` of the run recorded in `parentPath`. Throws a TypeError
   * when `agentId` cannot name a transcript safely (it comes from model output).
   */
  childOf(parentPath: string, agentId: string): string;
  /** The parent transcript of the run recorded in `path`, or null when it is a tree's root. */
  parentOf(path: string): string | null;
}

/**
 * The default {@link ChildLayout}: child `id` of `X.jsonl` lives at `X.agents/<id>.jsonl`, and a
 * transcript outside any `*.agents` folder is the root of its tree.
 *
 * @example
 * agentsLayout.childOf('runs/main.jsonl', 'worker-1'); // 'runs/main.agents/worker-1.jsonl'
 * agentsLayout.parentOf('runs/main.jsonl'); // null
 */
export const agentsLayout: ChildLayout = Object.freeze({
  childOf: childTranscriptPath,
  parentOf: parentTranscriptPath,
});

/**
 * The folders a layout made between a tree's root transcript's folder and `path`, outermost
 * first: each step up whose child lives in another folder than its parent adds the child's
 * folder. For {@link agentsLayout} these are the `*.agents` folders ({@link agentsFoldersOf}).
 * A revive asks the writer to check each is a real folder, so nothing inside the tree can
 * redirect a write out of it.
 *
 * @example
 * layoutFoldersOf(agentsLayout, 'runs/main.agents/a.jsonl'); // ['runs/main.agents']
 */
export function layoutFoldersOf(layout: ChildLayout, path: string): string[] {
  const folders: string[] = [];
  let at = path;
  for (let depth = 0; depth < 64; depth += 1) {
    const parent = layout.parentOf(at);
    if (parent === null) break;
    if (dirname(at) !== dirname(parent)) folders.unshift(dirname(at));
    at = parent;
  }
  return folders;
}
