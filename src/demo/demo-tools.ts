/**
 * The demo's tools: real files in a real folder. `write_file` can be told to stop half-way
 * through one file, so that the process can be killed while the call is truly in flight — the
 * file half-written on disk, the dispatch durable in the transcript, no result anywhere.
 *
 * @module
 */
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { z } from 'zod';
import type { ToolDefinition, ToolFailure } from '../loop/types.ts';
import type { JsonValue } from '../transcript/records.ts';

/**
 * Called by `write_file` once half of a file is on disk; the rest is written when it resolves.
 *
 * @example
 * const onHalfWrite: HalfWriteHook = async ({ path, bytesWritten, bytesTotal }) => {
 *   console.error(`${path}: ${bytesWritten} of ${bytesTotal} bytes on disk; kill me now`);
 * };
 */
export type HalfWriteHook = (write: {
  path: string;
  bytesWritten: number;
  bytesTotal: number;
}) => Promise<void>;

/**
 * Options of {@link createDemoTools}.
 *
 * @example
 * const options: DemoToolsOptions = { workspace: '/tmp/demo/workspace', haltWriting: 'a.md' };
 * const tools = createDemoTools({ ...options, onHalfWrite });
 */
export interface DemoToolsOptions {
  /** The folder the tools work in; paths outside it are refused. */
  workspace: string;
  /** A file name (relative to the workspace) whose write stops half-way and calls `onHalfWrite`. */
  haltWriting?: string;
  onHalfWrite?: HalfWriteHook;
}

const fileInput = z.object({ path: z.string().describe('A path relative to the workspace') });
const writeInput = z.object({
  path: z.string().describe('A path relative to the workspace'),
  content: z.string().describe('The whole new content of the file'),
});

/**
 * `write_file` (side-effect), `read_file` (read-only) and `list_files` (read-only), confined to
 * one workspace folder. A path that leaves the workspace, or a missing file, is an error result
 * the model reads, never an exception.
 *
 * @example
 * const tools = createDemoTools({ workspace: '/tmp/demo/workspace' });
 * const loop = new Loop({ backends: [model], writer: session, tools });
 */
export function createDemoTools(options: DemoToolsOptions): ToolDefinition<never>[] {
  const { workspace } = options;
  let halted = false;

  const writeFile: ToolDefinition<z.infer<typeof writeInput>> = {
    name: 'write_file',
    description: 'Write a UTF-8 text file in the workspace, replacing it if it exists.',
    inputSchema: writeInput,
    idempotency: 'side-effect',
    async execute({ path, content }) {
      const target = insideWorkspace(workspace, path);
      if (typeof target !== 'string') return target;
      await mkdir(dirname(target), { recursive: true });
      const bytes = Buffer.from(content, 'utf8');
      const handle = await open(target, 'w', 0o644);
      try {
        const halt =
          !halted && options.haltWriting !== undefined && normalize(path) === options.haltWriting;
        if (halt && options.onHalfWrite !== undefined) {
          halted = true;
          const half = Math.floor(bytes.length / 2);
          await handle.write(bytes.subarray(0, half), 0, half, 0);
          await handle.sync();
          await options.onHalfWrite({ path, bytesWritten: half, bytesTotal: bytes.length });
          await handle.write(bytes.subarray(half), 0, bytes.length - half, half);
        } else {
          await handle.write(bytes, 0, bytes.length, 0);
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      return { path, bytes: bytes.length };
    },
  };

  const readFileTool: ToolDefinition<z.infer<typeof fileInput>> = {
    name: 'read_file',
    description: 'Read a UTF-8 text file from the workspace.',
    inputSchema: fileInput,
    idempotency: 'read-only',
    async execute({ path }) {
      const target = insideWorkspace(workspace, path);
      if (typeof target !== 'string') return target;
      try {
        const content = await readFile(target, 'utf8');
        return { path, bytes: Buffer.byteLength(content), content };
      } catch (error) {
        return failure(`${path}: ${(error as NodeJS.ErrnoException).code ?? 'cannot read'}`);
      }
    },
  };

  const listFiles: ToolDefinition<Record<string, never>> = {
    name: 'list_files',
    description: 'List the files in the workspace.',
    inputSchema: z.object({}),
    idempotency: 'read-only',
    async execute() {
      try {
        const entries = await readdir(workspace, { recursive: true, withFileTypes: true });
        const files: JsonValue[] = entries
          .filter((entry) => entry.isFile())
          .map((entry) => relative(workspace, join(entry.parentPath, entry.name)))
          .sort();
        return files;
      } catch {
        return [];
      }
    },
  };

  return [writeFile, readFileTool, listFiles] as unknown as ToolDefinition<never>[];
}

/** The absolute path of `path` inside the workspace, or an error result when it leaves it. */
function insideWorkspace(workspace: string, path: string): string | ToolFailure {
  if (path === '' || isAbsolute(path)) return failure(`${path}: give a path inside the workspace`);
  const target = join(workspace, path);
  const inside = relative(workspace, target);
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`)) {
    return failure(`${path}: outside the workspace`);
  }
  return target;
}

function failure(message: string): ToolFailure {
  return { isError: true, output: message };
}
