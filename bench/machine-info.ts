import { execFileSync } from 'node:child_process';
import { cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';

/** The machine a run measured, written beside its figures. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  freeMemoryBytes: number;
  node: string;
  os: string;
  /** File system type of the folder the bench writes to (from `df -T`). */
  diskFileSystem: string;
  /** 1-minute load average when the run started and ended: other work on the machine skews timings. */
  loadAverage: { start: number; end?: number };
  postgres?: string;
}

/**
 * Describe this machine: CPU model and cores, memory, Node version, OS, and the file system
 * type under `folder`.
 *
 * @example
 * const machine = machineInfo('bench/data');
 */
export function machineInfo(folder: string): MachineInfo {
  let diskFileSystem = 'unknown';
  try {
    const out = execFileSync('df', ['-T', folder], { encoding: 'utf8' }).trim().split('\n');
    diskFileSystem = out.at(-1)?.split(/\s+/)[1] ?? 'unknown';
  } catch {
    // df is missing (not Linux): leave it unknown.
  }
  const processors = cpus();
  return {
    cpuModel: processors[0]?.model ?? 'unknown',
    cores: processors.length,
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    node: process.version,
    os: `${platform()} ${release()}`,
    diskFileSystem,
    loadAverage: { start: loadavg()[0] ?? 0 },
  };
}
