import type { RunRecords } from '../render/conversation-html.ts';
import type { NotRead } from '../runs/find-transcripts.ts';
import type { RunNode } from '../render/run-node.ts';
import { quote } from '../render/format-status.ts';

/**
 * What the page offers to do, and the command that does it once a person confirms.
 *
 * @example
 * const action: UiAction = { text: 'Nothing to revive.\n', runs: 0, verb: 'revive', argv: [] };
 */
export interface UiAction {
  /** The plan, as the command itself prints it. */
  text: string;
  /** How many runs the command acts on; 0 when there is nothing to confirm. */
  runs: number;
  /** What confirming does to them: `revive` (here) or `approve` (a worker revives them). */
  verb: 'revive' | 'approve';
  /** The `llm-agent` arguments that carry the plan out, without asking. */
  argv: string[];
  /**
   * The same arguments as shown to the person (a secret such as a password left out), quoted
   * for a shell; the command's first words are the way the user ran `llm-agent`.
   */
  shown?: string;
  /** The plan as a table, markup of ours with every transcript string escaped (files only). */
  table?: string;
  /** What the command reads on its stdin: the reconcile answers the plan showed. */
  input?: string;
}

/**
 * The command an action runs as the person is shown it — on the page, in its log and in the
 * ui's terminal: started the way they ran `llm-agent` (`npx llm-agent-revival` under npx), its
 * arguments quoted for a shell, so that it can be pasted as it is.
 *
 * @example
 * shownCommand({ text: '', runs: 1, verb: 'revive', argv: ['revive', '--yes', '--', 'my runs'] });
 * // "llm-agent revive --yes -- 'my runs'"
 */
export function shownCommand(action: UiAction, invocation = 'llm-agent'): string {
  return `${invocation} ${action.shown ?? action.argv.map(quote).join(' ')}`;
}

/**
 * The runs of a {@link UiSource}, and the folders below its PATHs that could not be read (their
 * runs are not in the tree: the page says so, as `status` does).
 *
 * @example
 * const { roots, notRead } = await source.tree();
 */
export interface UiTree {
  roots: RunNode[];
  notRead: NotRead[];
}

/**
 * Where the runs `llm-agent ui` shows come from: transcript files below some PATHs, or a
 * PostgreSQL store. Every read is made again on each request, so the page shows what is there
 * now.
 *
 * @example
 * const source = fileUiSource(['runs/'], process.cwd());
 * const { roots } = await source.tree();
 * const page = runTreeHtml(roots, new Map(), { sections: [] });
 */
export interface UiSource {
  /** The tree of runs, each with its state as `status` decides it. */
  tree(): Promise<UiTree>;
  /**
   * The runs are transcript files, each at its node's `path`: the server reads and renders
   * them in a worker thread, off its own (a huge record never holds other requests).
   */
  files?: boolean;
  /** What the page shows of one run of the tree (its records, or why they cannot be read). */
  records(node: RunNode): Promise<RunRecords>;
  /** The plan for the tree, and the command a Confirm runs. */
  action(roots: RunNode[]): Promise<UiAction>;
  /** Changes whenever anything the page shows may have changed; polled every second. */
  signature(): Promise<string>;
  /**
   * Calls `changed` soon after something may have changed, so the page need not wait for
   * the next poll; returns what stops it. Best effort: the poll stays the guarantee. Called
   * before the first `signature`, which may be what tells it where to look.
   */
  watch?(changed: () => void): () => void;
  /** Releases what the source holds (a database pool). */
  close(): Promise<void>;
}
