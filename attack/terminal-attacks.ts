import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { peek } from '../src/transcript/peek.ts';
import type { RecordBody } from '../src/transcript/records.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type ChildOutcome,
  callBodies,
  ending,
  faultNotProven,
  interruptedRun,
  runCli,
  unsafeCharacters,
  verdict,
  writeTranscript,
} from './support.ts';

/*
 * Model-controlled text aimed at the terminal: ANSI colour and screen-clearing sequences, OSC
 * (window title, clipboard), BEL, backspace and carriage return, a C1 CSI, NUL, bidi overrides.
 * Whatever the CLI prints must hold none of them raw (colour is off: NO_COLOR), and `--json`
 * must give them back exactly.
 */

/** The hostile text. */
export const PAYLOAD =
  'X\u001b[2J\u001b[31mRED\u001b]0;owned\u0007\u001b]52;c;ZXZpbA==\u0007\u202eevil\u2066\r\b\u009b31m\u0000end';

function rawIn(outcome: ChildOutcome): string[] {
  return unsafeCharacters(`${outcome.stdout}${outcome.stderr}`);
}

function summary(found: string[]): string {
  const unique = [...new Set(found)];
  return `${found.length} raw (${unique.slice(0, 6).join(' ')})`;
}

const statusLabels: Attack = {
  name: 'terminal-status',
  family: 'terminal',
  what: 'control, escape and bidi characters in agent ids, types, labels, a file name and an unreadable line: `status` prints none raw, `status --json` gives them back exactly',
  run: async (context) => {
    const runs = join(context.folder, 'runs');
    await writeTranscript(
      join(runs, 'main.jsonl'),
      interruptedRun({
        agentId: `id${PAYLOAD}`,
        agentType: `type${PAYLOAD}`,
        label: `label${PAYLOAD}`,
      }),
    );
    await writeTranscript(
      join(runs, `name${PAYLOAD.replaceAll('\u0000', '')}.jsonl`),
      interruptedRun(),
    );
    writeFileSync(join(runs, 'broken.jsonl'), `${PAYLOAD}\n`, { mode: 0o600 });
    const read = await peek(join(runs, 'main.jsonl'));
    if (!read.ok || !JSON.stringify(read.records[0]).includes('\\u001b'))
      return faultNotProven('the payload is not in the transcript');
    const plain = await runCli(['status', runs], { cwd: context.folder, timeoutMs: 20_000 });
    const json = await runCli(['status', join(runs, 'main.jsonl'), '--json'], {
      cwd: context.folder,
      timeoutMs: 20_000,
    });
    let exact = false;
    try {
      const parsed = JSON.parse(json.stdout) as {
        runs: { label: string; agentType: string; agentId: string }[];
      };
      const run = parsed.runs[0];
      exact =
        run?.label === `label${PAYLOAD}` &&
        run.agentType === `type${PAYLOAD}` &&
        run.agentId === `id${PAYLOAD}`;
    } catch {}
    const raw = rawIn(plain);
    return verdict(
      raw.length === 0 && exact,
      `status ${ending(plain)}: ${summary(raw)}; status --json ${exact ? 'exact' : 'NOT exact'}`,
    );
  },
};

const showMessages: Attack = {
  name: 'terminal-show',
  family: 'terminal',
  what: 'the hostile text in user, assistant and tool messages, a tool name, a call id and a tool input: `show` (--envelopes, --full) prints none raw, `show --json` exact',
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const bodies: RecordBody[] = interruptedRun({ task: `task ${PAYLOAD}` }).slice(0, 2);
    const { call, dispatch } = callBodies(`call${PAYLOAD}`, `tool${PAYLOAD}`, { text: PAYLOAD });
    (call as { content: unknown[] }).content.unshift({
      type: 'text',
      text: `assistant ${PAYLOAD}`,
    });
    bodies.push(call, dispatch, {
      type: 'message',
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          callId: `call${PAYLOAD}`,
          toolName: `tool${PAYLOAD}`,
          output: `output ${PAYLOAD}`,
          isError: false,
        },
      ],
    });
    await writeTranscript(path, bodies);
    const outputs: string[] = [];
    let worst = 0;
    for (const flags of [[], ['--envelopes'], ['--full']]) {
      const result = await runCli(['show', path, ...flags], {
        cwd: context.folder,
        timeoutMs: 20_000,
      });
      const raw = rawIn(result);
      worst += raw.length;
      outputs.push(`${`show ${flags.join(' ')}`.trim()}: ${summary(raw)}`);
    }
    const json = await runCli(['show', path, '--json'], { cwd: context.folder, timeoutMs: 20_000 });
    let exact = false;
    try {
      exact = JSON.stringify(JSON.parse(json.stdout)).includes(
        JSON.stringify(`output ${PAYLOAD}`).slice(1, -1),
      );
    } catch {}
    return verdict(
      worst === 0 && exact,
      `${outputs.join('; ')}; show --json ${exact ? 'exact' : 'NOT exact'}`,
    );
  },
};

const progressLines: Attack = {
  name: 'terminal-progress',
  family: 'terminal',
  what: 'a model whose text, tool calls and unknown tool name carry the hostile text: `run` progress lines and final answer print none raw',
  run: async (context) => {
    const out = join(context.folder, 'runs', 'hostile.jsonl');
    const result = await runCli(
      ['run', '--agents', AGENTS_MODULE, '--type', 'hostile', '--out', out, 'go'],
      {
        cwd: context.folder,
        timeoutMs: 30_000,
        env: {
          ATTACK_HOSTILE_JSON: JSON.stringify(PAYLOAD),
          ATTACK_LEDGER: join(context.folder, 'ledger.jsonl'),
        },
      },
    );
    const read = await peek(out);
    if (!read.ok || !JSON.stringify(read.records).includes('\\u001b]52'))
      return faultNotProven(`the model's text is not in the transcript (${ending(result)})`);
    const raw = rawIn(result);
    return verdict(
      raw.length === 0,
      `run ${ending(result)}, ${result.stderr.split('\n').length} progress lines: ${summary(raw)}`,
    );
  },
};

const revivePlan: Attack = {
  name: 'terminal-revive-plan',
  family: 'terminal',
  what: "the hostile text in an in-flight call's tool name and call id, and in a label: the plan `revive` prints holds none raw",
  run: async (context) => {
    const path = join(context.folder, 'runs', 'main.jsonl');
    const bodies = interruptedRun({ label: `label${PAYLOAD}` }).slice(0, 2);
    const { call, dispatch } = callBodies(`call${PAYLOAD}`, `tool${PAYLOAD}`, { text: PAYLOAD });
    bodies.push(call, dispatch);
    await writeTranscript(path, bodies);
    const before = await peek(path);
    const result = await runCli(['revive', path, '--agents', AGENTS_MODULE], {
      cwd: context.folder,
      timeoutMs: 20_000,
    });
    if (!before.ok || !/Plan/.test(result.stdout))
      return faultNotProven(`no plan was printed (${ending(result)})`);
    const raw = rawIn(result);
    return verdict(
      raw.length === 0,
      `revive (no --yes) ${ending(result)}, the plan printed: ${summary(raw)}`,
    );
  },
};

/** The terminal attacks. */
export const TERMINAL_ATTACKS: Attack[] = [statusLabels, showMessages, progressLines, revivePlan];
