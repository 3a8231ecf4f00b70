import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/*
 * `npm run attack -- --quick`, the form CI runs, as a child process: every attack must hold
 * (broken=0), and there must be at least 54 of them. The attacks themselves prove their faults
 * happened (attack/); this test only reads the program's verdict.
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));

test('npm run attack -- --quick: every attack holds (broken=0, tried ≥ 54)', {
  timeout: 15 * 60_000,
}, async () => {
  const seed = process.env.SEED ?? String(Date.now() % 2 ** 31);
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>(
    (resolve, reject) => {
      const child = spawn(
        process.execPath,
        [join(REPO, 'attack/main.ts'), '--quick', '--seed', seed],
        {
          cwd: REPO,
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      child.on('error', reject);
      child.on('close', (exitCode) => resolve({ code: exitCode, stdout: output }));
    },
  );
  const lines = stdout.trimEnd().split('\n');
  assert.match(lines[0] ?? '', new RegExp(`^attack: seed ${seed}`));
  const summary = /^attack: tried=(\d+) held=(\d+) broken=(\d+)$/.exec(lines.at(-1) ?? '');
  assert.ok(summary, `no summary line; output ends:\n${lines.slice(-5).join('\n')}`);
  const [, tried, held, broken] = summary.map(Number);
  const brokenLines = lines.filter((line) => /^\s+BROKEN /.test(line)).join('\n');
  assert.equal(broken, 0, `seed ${seed}: broken attacks:\n${brokenLines}`);
  assert.ok((tried ?? 0) >= 54, `only ${tried} attacks tried`);
  assert.equal(held, tried);
  assert.equal(code, 0);
});
