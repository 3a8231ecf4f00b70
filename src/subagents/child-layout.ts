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
