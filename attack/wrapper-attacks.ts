import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peek } from '../src/transcript/peek.ts';
import { PAYLOAD } from './terminal-attacks.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type ChildOutcome,
  ending,
  faultNotProven,
  runBounded,
  runCli,
  unsafeCharacters,
  verdict,
} from './support.ts';

/*
 * The readers against transcripts the AI SDK wrapper writes: a real wrapped ToolLoopAgent whose
 * model is hostile (attack/wrapper-program.ts) dies by SIGKILL inside its tool; then `status`,
 * `show` (plain, --envelopes, --full) and the plan `revive` prints must hold none of the
 * terminal payload raw, and `show --json` must give it back exactly — as for the Loop's.
 */

const PROGRAM = fileURLToPath(new URL('./wrapper-program.ts', import.meta.url));

function summary(outcome: ChildOutcome): string {
  const found = unsafeCharacters(`${outcome.stdout}${outcome.stderr}`);
  return `${found.length} raw`;
}

const wrapperReaders: Attack = {
  name: 'wrapper-hostile-text',
  family: 'terminal',
  what: 'a wrapped AI SDK ToolLoopAgent whose model puts the terminal payload in its text, call ids and tool input, SIGKILLed in its tool: `status`, `show` (plain, --envelopes, --full) and the `revive` plan print none raw; `show --json` exact',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const died = await runBounded([PROGRAM, path], {
      cwd: context.folder,
      timeoutMs: 30_000,
      env: { ATTACK_PAYLOAD: JSON.stringify(PAYLOAD) },
    });
    const read = await peek(path);
    if (
      died.signal !== 'SIGKILL' ||
      !read.ok ||
      !JSON.stringify(read.records).includes('\\u001b]52')
    )
      return faultNotProven(
        `the wrapped program did not die in its tool with the payload written (${ending(died)})`,
      );
    const results: string[] = [];
    let worst = 0;
    const probes: [string, string[]][] = [
      ['status', ['status', path]],
      ['show', ['show', path]],
      ['show --envelopes', ['show', path, '--envelopes']],
      ['show --full', ['show', path, '--full']],
      ['revive (plan)', ['revive', path, '--agents', AGENTS_MODULE]],
    ];
    for (const [label, args] of probes) {
      const outcome = await runCli(args, { cwd: context.folder, timeoutMs: 20_000 });
      worst += unsafeCharacters(`${outcome.stdout}${outcome.stderr}`).length;
      results.push(`${label} ${ending(outcome)}: ${summary(outcome)}`);
      if (label === 'status' && !/revivable/.test(outcome.stdout))
        return faultNotProven(`status does not show the run revivable (${ending(outcome)})`);
      if (label === 'revive (plan)' && !/Plan/.test(outcome.stdout))
        return faultNotProven(`no plan was printed (${ending(outcome)})`);
    }
    const json = await runCli(['show', path, '--json'], { cwd: context.folder, timeoutMs: 20_000 });
    let exact = false;
    try {
      exact = JSON.stringify(JSON.parse(json.stdout)).includes(
        JSON.stringify(`second ${PAYLOAD}`).slice(1, -1),
      );
    } catch {}
    return verdict(
      worst === 0 && exact,
      `${results.join('; ')}; show --json ${exact ? 'exact' : 'NOT exact'}`,
    );
  },
};

/** The attacks on transcripts the AI SDK wrapper writes. */
export const WRAPPER_ATTACKS: Attack[] = [wrapperReaders];
