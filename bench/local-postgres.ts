import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PostgreSQL the bench can use, or why there is none. */
export type PostgresServer =
  | { ok: true; url: string; version: string; stop(): Promise<void>; startedHere: boolean }
  | { ok: false; reason: string };

/** What the bench needs, said once wherever it is missing. */
export const POSTGRES_REQUIREMENT =
  'PostgreSQL server binaries (initdb, pg_ctl, postgres; Debian: apt-get install postgresql), ' +
  'or BENCH_POSTGRES_URL naming a server the bench may create schemas in';

/** The folder holding initdb and pg_ctl ('' when they are on PATH), or null when absent. */
function findBinaries(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb && command -v pg_ctl'], {
    encoding: 'utf8',
  });
  if (onPath.status === 0) return '';
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  const newest = versions[0];
  return newest === undefined ? null : join(root, newest, 'bin');
}

/**
 * Start a throw-away PostgreSQL cluster in `folder` listening on a Unix socket only (no
 * network), with its defaults for durability (fsync on, synchronous_commit on). As root it
 * runs as the `postgres` user, since PostgreSQL refuses to run as root. BENCH_POSTGRES_URL
 * skips all this and uses that server instead.
 *
 * @example
 * const server = await startLocalPostgres('bench/data/postgres');
 * if (server.ok) { ...; await server.stop(); }
 */
export async function startLocalPostgres(folder: string): Promise<PostgresServer> {
  const given = process.env.BENCH_POSTGRES_URL;
  if (given !== undefined && given !== '') {
    return {
      ok: true,
      url: given,
      version: 'given',
      stop: async () => undefined,
      startedHere: false,
    };
  }
  const binaries = findBinaries();
  if (binaries === null) return { ok: false, reason: `not found: ${POSTGRES_REQUIREMENT}` };
  const tool = (name: string) => (binaries === '' ? name : join(binaries, name));
  const root = process.getuid?.() === 0;
  const as = async (command: string, args: string[]) => {
    const [file, argv] = root
      ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
      : [command, args];
    return run(file, argv, { encoding: 'utf8' });
  };
  const absolute = resolve(folder);
  const data = join(absolute, 'cluster');
  const socket = join(absolute, 'socket');
  try {
    await rm(absolute, { recursive: true, force: true });
    await mkdir(data, { recursive: true, mode: 0o700 });
    await mkdir(socket, { recursive: true, mode: 0o700 });
    if (root) {
      const { stdout } = await run('id', ['-u', 'postgres'], { encoding: 'utf8' });
      const { stdout: group } = await run('id', ['-g', 'postgres'], { encoding: 'utf8' });
      for (const path of [absolute, data, socket]) {
        await chown(path, Number(stdout.trim()), Number(group.trim()));
      }
    }
    await as(tool('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    const port = '54329';
    await as(tool('pg_ctl'), [
      '-D',
      data,
      '-w',
      '-l',
      join(absolute, 'server.log'),
      '-o',
      `-c listen_addresses='' -k ${socket} -p ${port}`,
      'start',
    ]);
    const { stdout: version } = await as(tool('postgres'), ['--version']);
    const url = `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socket)}&port=${port}`;
    return {
      ok: true,
      url,
      version: version.trim(),
      startedHere: true,
      stop: async () => {
        await as(tool('pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
        await rm(absolute, { recursive: true, force: true });
      },
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      reason: `could not start PostgreSQL (${message.split('\n')[0]}); needs ${POSTGRES_REQUIREMENT}`,
    };
  }
}
