import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import { planApproval } from '../runs/approve-runs.ts';
import { databaseTree } from '../runs/database-status.ts';
import { walkTree } from '../render/run-node.ts';
import { quote } from '../render/format-status.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { createStyle } from '../render/terminal-style.ts';
import type { UiSource } from './ui-source.ts';

/**
 * The runs of a PostgreSQL store for `llm-agent ui --database URL [--schema NAME]`: the tree
 * `status --database` shows, each run's records, and, when runs are parked
 * `awaiting-approval`, the plan `revive --database` prints for them. Confirm runs
 * `llm-agent revive --database URL [--schema NAME] --yes -- RUN…`, which approves them; a worker
 * then revives each exactly once (nothing is revived in the ui's process). `url` and `schema`
 * are what the store was connected with; the page shows the URL without its password.
 *
 * @example
 * const store = await connectStore('ui', url, schema);
 * const source = databaseUiSource(store, { url, schema });
 * const server = await startUiServer({ source, cwd: process.cwd(), env: process.env, port: 0 });
 */
export function databaseUiSource(
  store: PostgresStore,
  options: { url: string; schema?: string; maxRevivals?: number },
): UiSource {
  const maxRevivals = options.maxRevivals ?? DEFAULT_MAX_REVIVALS;
  const target = (url: string): string[] => [
    '--database',
    url,
    ...(options.schema === undefined ? [] : ['--schema', options.schema]),
  ];
  return {
    tree: async () => ({ roots: await databaseTree(store, { maxRevivals }), notRead: [] }),
    async records(node) {
      const read = await store.read(node.path);
      return read.ok ? { records: read.records } : { error: read.detail };
    },
    async action(roots) {
      // The runs a person can approve: parked by a supervisor, held by no worker (what
      // `status --database` lists under "llm-agent revive --database URL …"), parents first.
      const waiting = [...walkTree(roots)]
        .filter(
          (node) => node.database?.owner === null && node.database.status === 'awaiting-approval',
        )
        .map((node) => node.path);
      const plan = await planApproval(store, waiting, { maxRevivals, style: createStyle(false) });
      const runs = plan.approvable;
      // The URL goes to the child as an argument: revive reads the store only from --database
      // (LLM_AGENT_DATABASE_URL is not read by a command that also works on files, so that
      // `revive runs/` keeps meaning the folder). It is no new exposure: the ui's own command
      // line, visible in `ps` as long as the ui runs, carries the same URL. The page shows it
      // with the password masked.
      // The run names after `--`: a run named like an option (`--help`) stays a run name.
      const argv = ['revive', ...target(options.url), '--yes', '--', ...runs];
      return {
        text: plan.text,
        runs: runs.length,
        verb: 'approve',
        argv,
        shown: ['revive', ...target(maskedUrl(options.url)), '--yes', '--', ...runs]
          .map(quote)
          .join(' '),
      };
    },
    async signature() {
      // Polled every second by the server: one query. The store's LISTEN/NOTIFY watch is not
      // used: it fires on a change of owner or status only, not on the records a running run
      // appends (its size, last seq) nor on a lease running out (a run turning from running to
      // dead changes no row: the server's clock does it), which the page must show too.
      const rows = await store.runs();
      return rows
        .map(
          (row) =>
            `${row.run}\t${row.owner ?? ''}\t${row.status}\t${row.epoch}\t${row.leaseExpires ?? ''}\t${row.leaseExpired}\t${row.lastSeq}\t${row.bytes}`,
        )
        .join('\n');
    },
    close: () => store.close(),
  };
}

/**
 * `url` with its password (in the user part, or a `password` parameter) replaced by `***`;
 * a URL that does not parse is shown as `URL`, since what in it is secret cannot be told.
 */
function maskedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'URL';
  }
  if (parsed.password !== '') parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.toString();
}
