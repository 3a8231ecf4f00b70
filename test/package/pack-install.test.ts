/**
 * What a user of the published package gets: `npm pack` (which builds dist/ in `prepack`), the
 * tarball installed into an empty project, and the `llm-agent` command run from there.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** What a TypeScript user of the PostgreSQL store installs beside the package (docs/store.md). */
const TYPES = ['@types/node@24', 'pg@8', '@types/pg@8'];
/** The TypeScript 7 a consumer compiles with (its own package: it has the same bin as 5's). */
const TYPESCRIPT_7 = 'typescript@7.0.2';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The pinned Node (node_modules/.bin) first on PATH, as `npm test` has it: npm and npx use it. */
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}${delimiter}${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`,
  NO_COLOR: '1',
  npm_config_update_notifier: 'false',
};

async function sh(command: string, args: string[], cwd: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 240_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : 1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

interface PackListing {
  filename: string;
  files: { path: string }[];
}

describe('the published package, packed and installed into an empty project', () => {
  let folder = '';
  let project = '';
  let tarball = '';
  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'llm-agent-pack-'));
    const packed = await sh('npm', ['pack', '--json', '--pack-destination', folder], ROOT);
    assert.equal(packed.code, 0, packed.stderr);
    const [listing] = JSON.parse(packed.stdout) as PackListing[];
    assert.ok(listing !== undefined, packed.stdout);
    tarball = join(folder, listing.filename);
    project = join(folder, 'project');
    await mkdir(project);
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'tryout', private: true, type: 'module' }),
    );
    // The dependencies come from npm's cache when they are there (after `npm ci`).
    let installed = await sh(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', tarball, ...TYPES],
      project,
    );
    if (installed.code !== 0) {
      installed = await sh(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...TYPES],
        project,
      );
    }
    assert.equal(installed.code, 0, installed.stderr);
    const compiler7 = join(folder, 'typescript-7');
    await mkdir(compiler7);
    await writeFile(join(compiler7, 'package.json'), JSON.stringify({ private: true }));
    const typescript7 = await sh(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', TYPESCRIPT_7],
      compiler7,
    );
    assert.equal(typescript7.code, 0, typescript7.stderr);
  });
  after(async () => {
    if (folder !== '') await rm(folder, { recursive: true, force: true });
  });

  test('npm pack --dry-run lists LICENSE, README, dist, docs and the sources, and no tests', async () => {
    const dry = await sh('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT);
    assert.equal(dry.code, 0, dry.stderr);
    const [listing] = JSON.parse(dry.stdout) as PackListing[];
    const paths = (listing?.files ?? []).map((file) => file.path);
    for (const needed of ['LICENSE', 'README.md', 'package.json', 'dist/index.js']) {
      assert.ok(paths.includes(needed), `${needed} is not in the package: ${paths.join(', ')}`);
    }
    assert.ok(paths.includes('dist/cli/main.js'));
    assert.ok(paths.some((path) => path.startsWith('docs/') && path.endsWith('.md')));
    // The sources ship: the source maps name them and the docs cite them.
    assert.ok(paths.includes('src/index.ts'));
    const unwanted = paths.filter(
      (path) => /^(test|crashtest|attack|bench|scripts)\//.test(path) || /\.test\./.test(path),
    );
    assert.deepEqual(unwanted, []);
  });

  test('every source map of the installed package names files that are there', async () => {
    const installed = join(project, 'node_modules', 'llm-agent-revival');
    const maps = (await readdir(join(installed, 'dist'), { recursive: true })).filter((name) =>
      name.endsWith('.js.map'),
    );
    assert.ok(maps.length > 50, `only ${maps.length} source maps`);
    const missing: string[] = [];
    for (const name of maps) {
      const map = JSON.parse(await readFile(join(installed, 'dist', name), 'utf8')) as {
        sources: string[];
      };
      for (const source of map.sources) {
        const target = join(installed, 'dist', dirname(name), source);
        if (!(await exists(target))) missing.push(`${name} → ${source}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('the docs cite only files the installed package has', async () => {
    const installed = join(project, 'node_modules', 'llm-agent-revival');
    const docs = (await readdir(join(installed, 'docs'))).filter((name) => name.endsWith('.md'));
    const missing: string[] = [];
    for (const doc of ['README.md', ...docs.map((name) => `docs/${name}`)]) {
      const text = await readFile(join(installed, doc), 'utf8');
      for (const match of text.matchAll(/\b((?:src|docs)\/[\w./-]+\.(?:ts|md|png|svg))\b/g)) {
        const cited = match[1] as string;
        if (!(await exists(join(installed, cited)))) missing.push(`${doc}: ${cited}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  for (const compiler of [
    {
      name: 'TypeScript 5',
      tsc: () => join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      types: [],
    },
    // TypeScript 7 includes no @types package unless told: "types": ["node"] (docs say so).
    {
      name: 'TypeScript 7',
      tsc: () => join(folder, 'typescript-7', 'node_modules', 'typescript', 'bin', 'tsc'),
      types: ['node'],
    },
  ]) {
    test(`a consumer compiles against the declarations with skipLibCheck off (${compiler.name})`, async () => {
      const consumer = join(project, `consumer-${compiler.types.length}`);
      await mkdir(consumer, { recursive: true });
      await writeFile(
        join(consumer, 'consumer.ts'),
        `import { Loop, Revival, Composer } from 'llm-agent-revival';
import { Session } from 'llm-agent-revival/transcript';
import { FileStore, PostgresStore } from 'llm-agent-revival/store';
import { MemoryFileSystem } from 'llm-agent-revival/testing';
export const used = [Loop, Revival, Composer, Session, FileStore, PostgresStore, MemoryFileSystem];
`,
      );
      const options = {
        target: 'es2023',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        ...(compiler.types.length > 0 ? { types: compiler.types } : {}),
      };
      await writeFile(
        join(consumer, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: options, files: ['consumer.ts'] }),
      );
      const compiled = await sh(process.execPath, [compiler.tsc(), '-p', consumer], consumer);
      assert.equal(compiled.code, 0, `${compiled.stdout}\n${compiled.stderr}`);
    });
  }

  test('package.json builds in prepack and has no install-time script', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    assert.equal(manifest.name, 'llm-agent-revival');
    assert.equal(manifest.scripts.prepare, undefined);
    assert.equal(manifest.scripts.install, undefined);
    assert.equal(manifest.scripts.postinstall, undefined);
    assert.match(manifest.scripts.prepack ?? '', /build/);
    assert.deepEqual(Object.keys(manifest.bin).sort(), ['llm-agent', 'llm-agent-revival']);
  });

  test('npx llm-agent demo runs offline to the end, and status reads what it left', async () => {
    const demo = await sh('npx', ['--no-install', 'llm-agent-revival', 'demo', 'runs'], project);
    assert.equal(demo.code, 0, `${demo.stdout}\n${demo.stderr}`);
    assert.match(demo.stdout, /All 10 checks held\./);
    const status = await sh(
      'npx',
      ['--no-install', 'llm-agent-revival', 'status', 'runs'],
      project,
    );
    assert.equal(status.code, 0, `${status.stdout}\n${status.stderr}`);
    assert.match(status.stdout, /^runs\/lead\.jsonl \(lead\)\s+lead\s+Report\s+finished/m);
    assert.match(status.stdout, /3 runs: 3 finished\./);
  });

  test('the second bin name and --version answer from the installed package', async () => {
    const version = await sh('npx', ['--no-install', 'llm-agent-revival', '--version'], project);
    assert.equal(version.code, 0, version.stderr);
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(version.stdout.trim(), manifest.version);
  });

  test('the root export and the subpaths, testing included, import from the installed package', async () => {
    const script = join(project, 'imports.mjs');
    await writeFile(
      script,
      `import { Session, Loop, Revival, Composer, spawnAgentTool } from 'llm-agent-revival';
import { Session as SubSession } from 'llm-agent-revival/transcript';
import { Loop as SubLoop } from 'llm-agent-revival/loop';
import { Revival as SubRevival } from 'llm-agent-revival/revival';
import { Composer as SubComposer } from 'llm-agent-revival/subagents';
import { MemoryFileSystem, ScriptedModel } from 'llm-agent-revival/testing';
// The testing export, as a user's test uses it: a scripted run on a file system in memory.
const fileSystem = new MemoryFileSystem();
fileSystem.makeFolderSync('/runs');
const scripted = new ScriptedModel([{ text: 'Hello from the script.' }]);
const meta = { agentId: 'main', agentType: 'main', label: 'Main', model: 'scripted' };
const session = await Session.create('/runs/main.jsonl', meta, { fileSystem });
const result = await new Loop({ backends: [scripted.model], writer: session }).start('Hi');
await session.close();
console.log(JSON.stringify([
  Session === SubSession, Loop === SubLoop, Revival === SubRevival, Composer === SubComposer,
  typeof spawnAgentTool, result.text, scripted.violations.length,
  fileSystem.readFile('/runs/main.jsonl').toString('utf8').includes('Hello from the script.'),
]));
`,
    );
    const imported = await sh(process.execPath, [script], project);
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(JSON.parse(imported.stdout), [
      true,
      true,
      true,
      true,
      'function',
      'Hello from the script.',
      0,
      true,
    ]);
  });

  test('a .ts agents module on a Node that cannot run TypeScript: one line naming the Node needed', async () => {
    await writeFile(join(project, 'probe.ts'), 'export const typed: number = 1;\n');
    await writeFile(
      join(project, 'agents.ts'),
      "export default { main: { description: 'd', system: 's', model: 'openai:gpt-5' as string } };\n",
    );
    // An older Node on this machine (the system's, not the pinned one), and else the pinned
    // one with type stripping turned off: the same ERR_UNKNOWN_FILE_EXTENSION either way.
    const candidates: string[][] = [
      ['/usr/bin/node'],
      ['/usr/local/bin/node'],
      [process.execPath, '--no-experimental-strip-types'],
    ];
    let node: string[] | undefined;
    for (const candidate of candidates) {
      const [command = '', ...flags] = candidate;
      const probe = await sh(
        command,
        [...flags, '--input-type=module', '-e', "await import('./probe.ts')"],
        project,
      );
      // Proof that this Node really cannot load a .ts file.
      if (probe.code !== 0 && /ERR_UNKNOWN_FILE_EXTENSION/.test(probe.stderr)) {
        node = candidate;
        break;
      }
    }
    assert.ok(node !== undefined, 'no Node here refused a .ts file, not even with stripping off');
    const [command = '', ...flags] = node;
    const bin = join(project, 'node_modules', 'llm-agent-revival', 'dist', 'cli', 'main.js');
    const ran = await sh(
      command,
      [...flags, bin, 'run', '--agents', 'agents.ts', 'hello'],
      project,
    );
    assert.equal(ran.code, 2, `${ran.stdout}\n${ran.stderr}`);
    const lines = ran.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, ran.stderr);
    assert.match(
      lines[0] ?? '',
      /^llm-agent: agents\.ts: Node v\d+\.\d+\.\d+ cannot load a TypeScript agents module: it needs Node 22\.18 or later/,
    );
  });
});
