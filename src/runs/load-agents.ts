/**
 * Loading an `--agents MODULE`: its default export is a registry of agent types
 * (`Record<string, AgentDefinition>`), or a function of the run's context returning one (so a
 * module can put its tools' workspace beside the transcript).
 *
 * @module
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentDefinition, AgentRegistry } from '../subagents/agent-definition.ts';
import { checkModelSpec } from '../subagents/model-spec.ts';
import { UserError } from './user-error.ts';

/**
 * What a function default export is given.
 *
 * @example
 * // agents.ts: put the tools' workspace beside the transcript
 * export default (context: AgentsContext) =>
 *   agentsWorkingIn(join(dirname(context.transcript), 'workspace'));
 */
export interface AgentsContext {
  /** The root transcript the command works on (absolute). */
  transcript: string;
  cwd: string;
  env: Record<string, string | undefined>;
}

/**
 * Import `module` (resolved against `cwd`) and return its registry, checked: every type has a
 * model and a system prompt. Every problem is a one-line {@link UserError} naming the module.
 *
 * @example
 * const registry = await loadAgents('agents.ts', { transcript, cwd, env: process.env });
 */
export async function loadAgents(module: string, context: AgentsContext): Promise<AgentRegistry> {
  const path = resolve(context.cwd, module);
  const exists = await stat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );
  if (!exists) throw new UserError(`${module}: no such agents module`);
  let loaded: { default?: unknown };
  const warnings = holdWarnings();
  try {
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
    warnings.release(true);
  } catch (error) {
    const needs =
      typeScriptProblem(path, error, process.version) ??
      commonJsProblem(module, error, await nearestPackageType(path));
    // Node's own warning about the same thing would be a second, longer message.
    warnings.release(needs === null);
    if (needs !== null) throw new UserError(`${module}: ${needs}`);
    const line = lineIn(error, path);
    // V8 keeps a JavaScript syntax error's position to itself; node --check prints it.
    const hint =
      line === '' && error instanceof SyntaxError ? `; \`node --check ${module}\` shows where` : '';
    throw new UserError(
      `${module}${line}: cannot load the agents module (${firstLine(error)}${hint})`,
    );
  }
  let registry = loaded.default;
  if (typeof registry === 'function') {
    try {
      registry = await (registry as (context: AgentsContext) => unknown)(context);
    } catch (error) {
      throw new UserError(
        `${module}${lineIn(error, path)}: its default export failed (${firstLine(error)})`,
      );
    }
  }
  return checkRegistry(module, registry);
}

/**
 * The registry, or a {@link UserError} saying what is wrong with it.
 *
 * @example
 * checkRegistry('agents.ts', { main: { description: '', model: 'openai:gpt-5', system: '' } });
 */
export function checkRegistry(module: string, registry: unknown): AgentRegistry {
  if (typeof registry !== 'object' || registry === null || Array.isArray(registry)) {
    throw new UserError(
      `${module}: the default export must be a registry { type: AgentDefinition } (or a function returning one)`,
    );
  }
  const entries = Object.entries(registry as Record<string, unknown>);
  if (entries.length === 0) throw new UserError(`${module}: the registry defines no agent type`);
  for (const [name, definition] of entries) {
    const candidate = definition as Partial<AgentDefinition> | null;
    if (typeof candidate !== 'object' || candidate === null) {
      throw new UserError(`${module}: agent type "${name}" is not an object`);
    }
    if (candidate.model === undefined) {
      throw new UserError(`${module}: agent type "${name}" has no model`);
    }
    const modelProblem = problemOfModel(candidate.model);
    if (modelProblem !== null) {
      throw new UserError(`${module}: agent type "${name}": model: ${modelProblem}`);
    }
    if (typeof candidate.system !== 'string') {
      throw new UserError(`${module}: agent type "${name}" has no system prompt (system)`);
    }
    if (candidate.tools !== undefined && !Array.isArray(candidate.tools)) {
      throw new UserError(`${module}: agent type "${name}": tools must be an array`);
    }
  }
  return registry as AgentRegistry;
}

/**
 * Why a `.ts` agents module could not be imported when the reason is the Node that runs the
 * CLI (it cannot strip types, or will not under node_modules), as one line saying what is
 * needed; null for any other failure.
 *
 * @example
 * typeScriptProblem('/a/agents.ts', { code: 'ERR_UNKNOWN_FILE_EXTENSION' }, 'v22.4.0');
 * // 'Node v22.4.0 cannot load a TypeScript agents module: it needs Node 22.18 or later …'
 */
export function typeScriptProblem(path: string, error: unknown, version: string): string | null {
  if (!/\.[cm]?ts$/.test(path)) return null;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_UNKNOWN_FILE_EXTENSION') {
    return `Node ${version} cannot load a TypeScript agents module: it needs Node 22.18 or later (or 23.6 or later), which runs .ts files — or write the module as .js`;
  }
  if (code === 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING') {
    return 'Node does not run TypeScript from inside node_modules: point --agents at a .js module there, or at a .ts module outside node_modules';
  }
  return null;
}

/**
 * Why a `.ts` agents module failed with ES module syntax when the reason is that Node reads it
 * as CommonJS (the nearest package.json says `"type": "commonjs"`, as `npm init -y` writes), as
 * one line with the fix; null for any other failure.
 *
 * @example
 * commonJsProblem('agents.ts', new SyntaxError('Cannot use import statement outside a module'),
 *   { file: '/w/package.json', type: 'commonjs' });
 * // 'Node reads this .ts file as CommonJS because /w/package.json says "type": "commonjs": …'
 */
export function commonJsProblem(
  module: string,
  error: unknown,
  nearest: PackageType | null,
): string | null {
  if (!/\.ts$/.test(module) || !(error instanceof SyntaxError)) return null;
  if (
    !/Cannot use import statement outside a module|Unexpected token 'export'/.test(error.message)
  ) {
    return null;
  }
  const why =
    nearest === null || nearest.type !== 'commonjs'
      ? 'Node reads this .ts file as CommonJS'
      : `Node reads this .ts file as CommonJS because ${nearest.file} says "type": "commonjs"`;
  const renamed = module.replace(/\.ts$/, '.mts');
  return `${why}: set "type": "module" in ${nearest?.file ?? 'the nearest package.json'}, or rename the module ${renamed}`;
}

/**
 * The nearest package.json above a file and the `type` it declares.
 *
 * @example
 * const nearest: PackageType = { file: '/w/package.json', type: 'commonjs' };
 */
export interface PackageType {
  file: string;
  type: string | undefined;
}

async function nearestPackageType(path: string): Promise<PackageType | null> {
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    const file = join(folder, 'package.json');
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text !== null) {
      try {
        const type = (JSON.parse(text) as { type?: unknown }).type;
        return { file, type: typeof type === 'string' ? type : undefined };
      } catch {
        return { file, type: undefined };
      }
    }
    if (dirname(folder) === folder) return null;
  }
}

/**
 * Holds the process's warnings while a module loads, then passes them on (or drops them when
 * the failure they describe is reported in our own words).
 */
function holdWarnings(): { release(pass: boolean): void } {
  const listeners = process.listeners('warning');
  const held: Error[] = [];
  const hold = (warning: Error): void => {
    held.push(warning);
  };
  process.removeAllListeners('warning');
  process.on('warning', hold);
  return {
    release(pass) {
      // The warning is emitted on a later tick than the failure it is about.
      setImmediate(() => {
        process.off('warning', hold);
        for (const listener of listeners) process.on('warning', listener);
        if (pass) for (const warning of held) for (const listener of listeners) listener(warning);
      });
    },
  };
}

const MODEL_SHAPES =
  'a model spec such as "openai:gpt-5", an AI SDK model, or a non-empty list of them';

/** What is wrong with a definition's `model`, or null: checked when the module loads. */
function problemOfModel(model: unknown): string | null {
  if (Array.isArray(model)) {
    if (model.length === 0) return `an empty list (expected ${MODEL_SHAPES})`;
    for (const [index, entry] of model.entries()) {
      const problem = problemOfOneModel(entry);
      if (problem !== null) return `[${index}]: ${problem}`;
    }
    return null;
  }
  return problemOfOneModel(model);
}

function problemOfOneModel(model: unknown): string | null {
  if (typeof model === 'string') return checkModelSpec(model)?.message ?? null;
  // An AI SDK model object streams; anything else would fail only at the first turn.
  if (typeof model === 'object' && model !== null && 'doStream' in model) {
    return typeof model.doStream === 'function' ? null : 'its doStream is not a function';
  }
  const got = model === null ? 'null' : Array.isArray(model) ? 'a list' : typeof model;
  return `expected ${MODEL_SHAPES}, not ${got === 'object' ? 'an object that is not a model' : got}`;
}

function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
}

/**
 * `:<line>` of the module where an error arose, when its stack says (a TypeScript syntax
 * error's stack opens with `<path>:<line>`; a throw has a frame `<url>:<line>:<column>`), so
 * that the user is sent to the line; '' when it does not.
 */
function lineIn(error: unknown, path: string): string {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const url = pathToFileURL(path).href;
  for (const line of stack.split('\n')) {
    for (const prefix of [`${path}:`, `${url}:`]) {
      const at = line.indexOf(prefix);
      if (at === -1 || (at > 0 && !/[\s(]/.test(line[at - 1] ?? ''))) continue;
      const found = /^(\d+)/.exec(line.slice(at + prefix.length));
      if (found !== null) return `:${found[1]}`;
    }
  }
  return '';
}
