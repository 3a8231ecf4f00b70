import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peek } from '../src/transcript/peek.ts';
import { PAYLOAD } from './terminal-attacks.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  type ChildOutcome,
  ending,
  faultNotProven,
  runBounded,
  runCli,
  unsafeCharacters,
  type Verdict,
  verdict,
} from './support.ts';

/*
 * The readers against transcripts the wrappers write: a real wrapped AI SDK ToolLoopAgent and
 * a real wrapped OpenAI Agents JS run whose models are hostile (attack/wrapper-program.ts,
 * attack/agents-wrapper-program.ts) die by SIGKILL inside their tool; then `status`, `show`
 * (plain, --envelopes, --full) and the plan `revive` prints must hold none of the terminal
 * payload raw, and `show --json` must give it back exactly — as for the Loop's.
 */

const PROGRAMS = [
  { sdk: 'AI SDK', program: fileURLToPath(new URL('./wrapper-program.ts', import.meta.url)) },
  {
    sdk: 'OpenAI Agents',
    program: fileURLToPath(new URL('./agents-wrapper-program.ts', import.meta.url)),
  },
];

function summary(outcome: ChildOutcome): string {
  const found = unsafeCharacters(`${outcome.stdout}${outcome.stderr}`);
  return `${found.length} raw`;
}

/** One SDK's hostile program, killed in its tool, its transcript read by every reader. */
async function hostileReaders(
  context: AttackContext,
  sdk: string,
  program: string,
  index: number,
): Promise<Verdict> {
  const path = join(context.folder, `runs-${index}`, 'main.jsonl');
  const died = await runBounded([program, path], {
    cwd: context.folder,
    timeoutMs: 30_000,
    env: { ATTACK_PAYLOAD: JSON.stringify(PAYLOAD) },
  });
  const read = await peek(path);
  if (died.signal !== 'SIGKILL' || !read.ok || !JSON.stringify(read.records).includes('\\u001b]52'))
    return faultNotProven(
      `the wrapped ${sdk} program did not die in its tool with the payload written (${ending(died)})`,
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
    `${sdk}: ${results.join('; ')}; show --json ${exact ? 'exact' : 'NOT exact'}`,
  );
}

const wrapperReaders: Attack = {
  name: 'wrapper-hostile-text',
  family: 'terminal',
  what: 'a wrapped AI SDK ToolLoopAgent and a wrapped OpenAI Agents JS run whose models put the terminal payload in their text, call ids and tool input, SIGKILLed in their tool: `status`, `show` (plain, --envelopes, --full) and the `revive` plan print none raw; `show --json` exact',
  run: async (context) => {
    const verdicts: Verdict[] = [];
    for (const [index, { sdk, program }] of PROGRAMS.entries()) {
      verdicts.push(await hostileReaders(context, sdk, program, index));
    }
    return verdict(
      verdicts.every((each) => each.held),
      verdicts.map((each) => each.evidence).join(' | '),
    );
  },
};

/** The attacks on transcripts the wrappers write. */
export const WRAPPER_ATTACKS: Attack[] = [wrapperReaders];
