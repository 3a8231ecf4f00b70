import type { Client } from 'pg';
import type { RunWatch } from '../run-queue.ts';

/**
 * Wake-ups when runs change, from PostgreSQL's LISTEN/NOTIFY: the store's trigger notifies
 * channel `llm_agent_runs` with `schema/run` whenever a run's owner or status changes. One
 * connection per store listens; any number of watchers share it.
 *
 * A notification is a hint, never the truth: a watcher re-reads the runs it watches. A lost
 * connection (a restart, `pg_terminate_backend`) loses notifications, so every wait is also
 * bounded by a poll interval — no wake-up is lost, at worst it comes one interval late — and
 * the next watch connects again.
 *
 * @example
 * const watch = await notifications.watch(['main.agents/researcher-call_1']);
 * try {
 *   if (!(await ended())) await watch.changed(1000, signal); // then read the runs again
 * } finally {
 *   watch.dispose();
 * }
 */
export class RunNotifications {
  readonly #connectionString: string;
  readonly #schema: string;
  readonly #applicationName: string;
  readonly #watchers = new Set<{ runs: ReadonlySet<string>; wake: () => void }>();
  #client: Promise<Client | null> | null = null;
  #closed = false;

  /** `schema` unquoted, as the trigger names it; `applicationName` as `pg_stat_activity` shows the connection. */
  constructor(connectionString: string, schema: string, applicationName = 'llm-agent listener') {
    this.#connectionString = connectionString;
    this.#schema = schema;
    this.#applicationName = applicationName;
  }

  /**
   * Start watching `runs` — listening before this resolves, so a change made after it is
   * never missed. Read the runs after this, then wait with `changed`: it resolves at the first
   * change of a watched run since the watch began, after `pollMs`, or when `signal` aborts.
   */
  async watch(runs: readonly string[]): Promise<RunWatch> {
    let changedSince = false;
    let wakeUp: (() => void) | null = null;
    const watcher = {
      runs: new Set(runs),
      wake: () => {
        changedSince = true;
        wakeUp?.();
      },
    };
    this.#watchers.add(watcher);
    await this.#listening();
    return {
      changed: (pollMs, signal) =>
        new Promise<void>((done) => {
          if (changedSince || signal?.aborted === true) {
            changedSince = false;
            done();
            return;
          }
          const finish = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', finish);
            wakeUp = null;
            changedSince = false;
            done();
          };
          const timer = setTimeout(finish, pollMs);
          signal?.addEventListener('abort', finish, { once: true });
          wakeUp = finish;
        }),
      dispose: () => {
        this.#watchers.delete(watcher);
        wakeUp?.();
      },
    };
  }

  /** Stop listening. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = await this.#client?.catch(() => null);
    this.#client = null;
    await client?.end().catch(() => undefined);
  }

  /** The listening connection, made on first use and again after it was lost; null when it cannot be made (polling carries on). */
  #listening(): Promise<Client | null> {
    if (this.#closed) return Promise.resolve(null);
    this.#client ??= this.#connect();
    return this.#client;
  }

  async #connect(): Promise<Client | null> {
    const pg = ((await import('pg')) as unknown as { default: typeof import('pg') }).default;
    const client = new pg.Client({
      connectionString: this.#connectionString,
      application_name: this.#applicationName,
    });
    const lost = () => {
      if (this.#client !== null) this.#client = null;
      client.end().catch(() => undefined);
      // Whatever changed while nobody listened, the watchers read again.
      for (const watcher of this.#watchers) watcher.wake();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      const slash = payload.indexOf('/');
      if (slash === -1 || payload.slice(0, slash) !== this.#schema) return;
      const run = payload.slice(slash + 1);
      for (const watcher of this.#watchers) if (watcher.runs.has(run)) watcher.wake();
    });
    try {
      await client.connect();
      await client.query('LISTEN llm_agent_runs');
      return client;
    } catch {
      this.#client = null;
      await client.end().catch(() => undefined);
      return null;
    }
  }
}
