import type { CommandIo } from '../runs/command-io.ts';

/**
 * The width to fit: `COLUMNS` when it is a positive whole number, else the terminal's own
 * (stdout's `columns`), else no limit (output to a pipe or a file is not cut).
 *
 * @example
 * terminalWidth({ ...io, env: { COLUMNS: '60' } }); // 60
 */
export function terminalWidth(io: Pick<CommandIo, 'env' | 'stdout'>): number {
  const fromEnv = io.env.COLUMNS ?? '';
  if (/^[1-9]\d{0,4}$/.test(fromEnv)) return Number(fromEnv);
  const columns = (io.stdout as { columns?: unknown }).columns;
  return typeof columns === 'number' && columns > 0 ? columns : Number.POSITIVE_INFINITY;
}
