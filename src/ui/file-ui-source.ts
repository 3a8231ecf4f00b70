import { realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { runRecordsOf } from '../render/conversation-html.ts';
import { type FolderListing, findTranscripts } from '../runs/find-transcripts.ts';
import { mayBeLocked, readLockTableAsync } from '../runs/lock-snapshot.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { createStyle } from '../render/terminal-style.ts';
import { loadAgents } from '../runs/load-agents.ts';
import {
  type PlanReconciliations,
  reconcilePlanHtml,
  reconcilePlanText,
} from '../runs/reconcile-plan.ts';
import { reconciledInputText } from '../runs/reconciled-input.ts';
import { planText, planTreeRevival } from '../runs/tree-revival-plan.ts';
import type { RunNode } from '../render/run-node.ts';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import { peek } from '../transcript/peek.ts';
import { FolderWatch } from './folder-watch.ts';
import { planTableHtml } from './plan-table.ts';
import { ReconcileCache } from './reconcile-cache.ts';
import { RunTreeReader } from './run-tree-reader.ts';
import type { UiSource, UiTree } from './ui-source.ts';

/** How long the answers of a plan's reconciles are shown before they are asked again. */
const RECONCILE_TTL_MS = 60_000;

/**
 * The runs recorded below `paths` (transcripts or folders, relative to `cwd`), as `status`
 * decides them (with its index, found through `env`, on a large tree); Confirm runs
 * `llm-agent revive PATH… --yes` (with `--agents` when given, and the reconcile answers the
 * plan showed on its stdin).
 *
 * @example
 * const source = fileUiSource(['runs/'], process.cwd(), { agents: 'agents.ts', env: process.env });
 */
export function fileUiSource(
  paths: string[],
  cwd: string,
  options: { agents?: string; env?: NodeJS.ProcessEnv } = {},
): UiSource {
  const { agents } = options;
  const env = options.env ?? {};
  const watching = new FolderWatch();
  // The tree is read in a worker thread (a huge transcript never holds the server's), and
  // again only when the files changed: the pages asked for at once, and a page's redraws,
  // share one read.
  const reader = new RunTreeReader();
  let last: { signature: string; tree: Promise<UiTree> } | undefined;
  const reconciles = new ReconcileCache(RECONCILE_TTL_MS, Date.now);
  return {
    files: true,
    async tree() {
      const { text } = await fileSignature(paths, cwd);
      if (last === undefined || last.signature !== text) {
        const job = { paths, cwd, env: { ...env }, maxRevivals: DEFAULT_MAX_REVIVALS };
        const tree = reader.read(job);
        const read = { signature: text, tree };
        last = read;
        tree.catch(() => {
          if (last === read) last = undefined;
        });
      }
      return last.tree;
    },
    async records(node) {
      return runRecordsOf(await peek(node.path));
    },
    async action(roots) {
      const plan = planTreeRevival(roots);
      // The ui loads the agents module in its own process and asks the reconciles of the
      // plan's calls in flight, so the plan shows their answers before anyone confirms; a
      // module that does not load is the revive's to report.
      const answers: PlanReconciliations =
        agents === undefined || plan.revivals.length === 0
          ? new Map()
          : await registriesOf(roots, agents, cwd, env).then(
              (registries) => reconciles.answers(plan, roots, registries),
              () => new Map(),
            );
      // The PATHs after `--`: a folder named like an option stays a PATH. The answers shown
      // go to the revive on its stdin: it records them instead of asking again.
      const argv = [
        'revive',
        '--yes',
        ...(agents === undefined ? [] : ['--agents', agents]),
        ...(answers.size === 0 ? [] : ['--reconciled-stdin']),
        '--',
        ...paths,
      ];
      return {
        text:
          planText(plan, createStyle(false)) + reconcilePlanText(plan, answers, createStyle(false)),
        table: planTableHtml(plan) + reconcilePlanHtml(plan, answers),
        runs: plan.revivals.length,
        verb: 'revive',
        argv,
        ...(answers.size === 0 ? {} : { input: reconciledInputText(answers) }),
      };
    },
    async signature() {
      const seen = await fileSignature(paths, cwd);
      watching.follow(seen.folders);
      return seen.text;
    },
    // Where to watch is learnt from each signature: the folders it read.
    watch(changed) {
      watching.start(changed);
      return () => watching.stop();
    },
    async close() {
      watching.stop();
      await reader.close();
    },
  };
}

/**
 * What the page shows of the files, as text that changes when it does: each transcript's
 * identity, size and modification time, and whether a process holds its lock (a run whose
 * process dies changes no byte: only its lock goes); each tree claim file and its lock. And
 * the folders worth watching: the PATHs that are folders, and every folder that holds a
 * transcript (a new `.agents` folder shows up in its parent's, which holds the parent run).
 */
async function fileSignature(
  paths: string[],
  cwd: string,
): Promise<{ text: string; folders: Set<string> }> {
  const listing: FolderListing = { folders: new Set(), claims: new Set() };
  const found = await findTranscripts(paths, cwd, [], listing);
  const table = await readLockTableAsync();
  const locked = (ino: number): string =>
    table === null ? '?' : mayBeLocked(table, ino) ? 'locked' : 'free';
  const parts: string[] = [];
  const folders = new Set<string>();
  for (const given of paths) {
    // The walk lists folders by their real paths: a PATH given through a link is found so.
    const path = await realpath(resolve(cwd, given)).catch(() => resolve(cwd, given));
    if (listing.folders.has(path)) folders.add(path);
  }
  for (const path of found) {
    folders.add(dirname(path));
    const stats = await stat(path).catch(() => undefined);
    parts.push(
      stats === undefined
        ? `${path}:gone`
        : `${path}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${locked(stats.ino)}`,
    );
  }
  for (const claim of [...listing.claims].sort()) {
    const stats = await stat(claim).catch(() => undefined);
    parts.push(`${claim}:${stats === undefined ? 'gone' : `${stats.ino}:${locked(stats.ino)}`}`);
  }
  return { text: parts.join('\n'), folders };
}

/** The registry of each root, from the agents module. */
async function registriesOf(
  roots: RunNode[],
  module: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<Map<RunNode, AgentRegistry>> {
  const registries = new Map<RunNode, AgentRegistry>();
  for (const root of roots) {
    registries.set(root, await loadAgents(module, { transcript: root.path, cwd, env }));
  }
  return registries;
}
