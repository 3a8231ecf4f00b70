/*
 * Text a model or a transcript controls (labels, agent types, messages, tool names, inputs,
 * outputs, file names, damage details) reaches the terminal escaped: no control byte, escape
 * sequence or bidi character of its own gets through `status`, `show`, the revive plan or the
 * progress lines of `run`; `--json` stays exact.
 */
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { inputDigest } from '../../src/loop/input-digest.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { buildTranscript, snapshotFolder, textMessage } from '../support/transcripts.ts';
import { hasStackTrace, REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';

/** Everything a hostile string can hold that a terminal acts on or a reader cannot see. */
const HOSTILE =
  'A\u001b[2J\u001b[H' + // clear the screen, cursor home
  '\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007' + // OSC 8 hyperlink
  '\u001b]52;c;cHduZWQ=\u0007' + // OSC 52: write the clipboard
  '\u0007\rOVERWRITE' + // BEL, carriage return
  '\u202eexe.txt\u202c\u2066x\u2069\u200f' + // bidi override, isolate, mark
  '\u0000\u009b31m\u007f' + // NUL, C1 CSI, DEL
  '\ufeff\u200b\u{e0041}\ud800Z'; // BOM, zero-width space, tag character, lone surrogate
const TOOL = `rm\u001b[8m -rf\u202e`;
const CALL = 'call_\u001b[1Ax';
const FILE_NAME = 'evil\u001b[2J\u202e.jsonl';

/** The code points that must never reach a terminal raw. */
function assertTerminalSafe(text: string, what: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index] as number;
    if ((byte < 0x20 && byte !== 0x0a && byte !== 0x09) || byte === 0x7f) {
      assert.fail(`${what}: raw control byte 0x${byte.toString(16)} at ${index}: ${text}`);
    }
    // A C1 control in UTF-8 is C2 80–C2 9F.
    if (
      byte === 0xc2 &&
      (bytes[index + 1] as number) >= 0x80 &&
      (bytes[index + 1] as number) <= 0x9f
    ) {
      assert.fail(`${what}: raw C1 control at ${index}`);
    }
  }
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    const bidiOrInvisible =
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069) ||
      code === 0x200e ||
      code === 0x200f ||
      code === 0x061c ||
      code === 0x200b ||
      code === 0xfeff ||
      code === 0x2028 ||
      code === 0x2029 ||
      (code >= 0xe0000 && code <= 0xe007f) ||
      code === 0xfffd; // what a lone surrogate becomes on the way out
    if (bidiOrInvisible) assert.fail(`${what}: raw U+${code.toString(16)} in ${text}`);
  }
}

/** With colour forced on, every escape in the output is one of our own colour codes. */
function assertOnlyOurColours(text: string, what: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape is the point
  const stripped = text.replace(/\u001b\[(?:1|2|22|31|32|33|35|36|39)m/g, '');
  assertTerminalSafe(stripped, what);
}

/** A line with a valid checksum whose JSON is broken by a raw escape: a damaged record. */
function damagedLine(): Buffer {
  const json = `{"v":1,"seq":1,"type":"message","role":\u001b]52;c;cHduZWQ=\u0007\u202e}`;
  const content = Buffer.from(json);
  const sum = crc32(content).toString(16).padStart(8, '0');
  return Buffer.concat([
    content.subarray(0, content.length - 1),
    Buffer.from(`,"crc":"${sum}"}\n`),
  ]);
}

/** A 100,000-level nested tool input: built by hand, since JSON.stringify cannot write it. */
function deepLine(depth: number): Buffer {
  const input = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
  const json = `{"v":1,"seq":2,"type":"message","at":"2026-01-01T00:00:02.000Z","role":"assistant","content":[{"type":"tool-call","callId":"deep","toolName":"t","input":${input}}]}`;
  const content = Buffer.from(json);
  const sum = crc32(content).toString(16).padStart(8, '0');
  return Buffer.concat([
    content.subarray(0, content.length - 1),
    Buffer.from(`,"crc":"${sum}"}\n`),
  ]);
}

function hostileBodies(): RecordBody[] {
  const input = { note: HOSTILE, nested: [HOSTILE] };
  return [
    {
      type: 'session-meta',
      agentId: 'main',
      agentType: HOSTILE,
      label: HOSTILE,
      model: 'test:model',
    },
    textMessage('user', HOSTILE),
    {
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'reasoning', text: HOSTILE },
        { type: 'text', text: HOSTILE },
        { type: 'tool-call', callId: 'call_0', toolName: TOOL, input },
      ],
    },
    {
      type: 'tool-dispatched',
      callId: 'call_0',
      toolName: TOOL,
      inputDigest: inputDigest(input),
      idempotency: 'read-only',
    },
    {
      type: 'message',
      role: 'tool',
      content: [
        { type: 'tool-result', callId: 'call_0', toolName: TOOL, output: HOSTILE, isError: false },
      ],
    },
    { type: 'tool-settled', callId: 'call_0', status: 'completed' },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId: CALL, toolName: TOOL, input }],
    },
    {
      type: 'tool-dispatched',
      callId: CALL,
      toolName: TOOL,
      inputDigest: inputDigest(input),
      idempotency: 'side-effect',
    },
  ];
}

describe('text from transcripts and models reaches the terminal escaped', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await mkdir(join(folder, 'runs'));
    // A run that died with a side-effect call in flight: revivable, so revive shows a plan.
    await writeFile(join(folder, 'runs', FILE_NAME), buildTranscript(hostileBodies()).bytes);
    const damaged = buildTranscript([
      {
        type: 'session-meta',
        agentId: 'broken',
        agentType: 'main',
        label: 'b',
        model: 'test:model',
      },
    ]);
    const after = buildTranscript([textMessage('user', 'later')], { firstSeq: 2 });
    await writeFile(
      join(folder, 'runs', 'damaged.jsonl'),
      Buffer.concat([damaged.bytes, damagedLine(), after.bytes]),
    );
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('the fault: the transcripts really hold the raw characters', async () => {
    const { readFile } = await import('node:fs/promises');
    const bytes = await readFile(join(folder, 'runs', FILE_NAME), 'utf8');
    // JSON escapes C0 controls and lone surrogates; C1, DEL and bidi are raw in the file.
    assert.ok(bytes.includes('\u009b') && bytes.includes('\u202e') && bytes.includes('\u007f'));
    assert.ok(bytes.includes('\\u001b[2J') && bytes.includes('\\ud800'));
    const damaged = await readFile(join(folder, 'runs', 'damaged.jsonl'), 'utf8');
    assert.ok(damaged.includes('\u001b]52;'), 'a raw escape in the damaged line');
  });

  test('status: rows, reasons, the unreadable detail and the next command are escaped', async () => {
    const plain = await runCli(['status', 'runs'], { cwd: folder });
    assert.equal(plain.code, 4, plain.stderr);
    assertTerminalSafe(plain.stdout, 'status stdout');
    assertTerminalSafe(plain.stderr, 'status stderr');
    // The LABEL and TYPE cells are cut at 40 columns.
    assert.ok(plain.stdout.includes('A\\x1b[2J\\x1b[H\\x1b]8;;https://evil.exam…'), plain.stdout);
    assert.ok(plain.stdout.includes("llm-agent revive $'runs/evil\\x1b[2J\\u202e.jsonl'"));
    assert.match(plain.stdout, /Unreadable: .*\\x1b\]52;/);
    const coloured = await runCli(['status', 'runs'], { cwd: folder, env: { FORCE_COLOR: '1' } });
    assert.ok(coloured.stdout.includes('\u001b[33m'), 'colour is on');
    assertOnlyOurColours(coloured.stdout, 'status stdout in colour');
  });

  test('status --json stays exact: the strings parse back to what the transcript holds', async () => {
    const result = await runCli(['status', 'runs', '--json'], { cwd: folder });
    assert.equal(result.code, 4, result.stderr);
    const json = JSON.parse(result.stdout) as {
      runs: {
        path: string;
        agentType: string;
        label: string;
        openDispatches: { callId: string; toolName: string }[];
      }[];
    };
    const run = json.runs.find((entry) => entry.path.endsWith(FILE_NAME));
    assert.ok(run !== undefined, result.stdout);
    assert.equal(run.path, join('runs', FILE_NAME));
    assert.equal(run.agentType, HOSTILE);
    assert.equal(run.label, HOSTILE);
    assert.deepEqual(run.openDispatches, [{ callId: CALL, toolName: TOOL }]);
  });

  test('show: message text, reasoning, tool names, ids, inputs, outputs and envelopes are escaped', async () => {
    const path = join('runs', FILE_NAME);
    const [plain, coloured, full] = await Promise.all([
      runCli(['show', path, '--envelopes'], { cwd: folder }),
      runCli(['show', path, '--envelopes'], { cwd: folder, env: { FORCE_COLOR: '1' } }),
      runCli(['show', path, '--envelopes', '--full'], { cwd: folder }),
    ]);
    assert.equal(plain.code, 0, plain.stderr);
    assertTerminalSafe(plain.stdout, 'show stdout');
    assertTerminalSafe(full.stdout, 'show --full stdout');
    assertOnlyOurColours(coloured.stdout, 'show stdout in colour');
    assert.ok(plain.stdout.includes('  A\\x1b[2J'), 'message text');
    assert.ok(plain.stdout.includes('(reasoning) A\\x1b[2J'), 'reasoning');
    assert.ok(
      plain.stdout.includes('→ rm\\x1b[8m -rf\\u202e call_0 {"note":"A\\u001b[2J'),
      plain.stdout,
    );
    assert.ok(plain.stdout.includes('\\x9b31m\\x7f'), 'C1 and DEL inside a JSON value');
    assert.ok(
      plain.stdout.includes('tool-dispatched rm\\x1b[8m -rf\\u202e call_\\x1b[1Ax (side-effect)'),
    );
    assert.ok(plain.stdout.includes('session-meta agent main (A\\x1b[2J'), plain.stdout);
  });

  test('show --json stays exact', async () => {
    const result = await runCli(['show', join('runs', FILE_NAME), '--json', '--envelopes'], {
      cwd: folder,
    });
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as {
      messages: {
        content: {
          type: string;
          text?: string;
          toolName?: string;
          callId?: string;
          input?: unknown;
          output?: unknown;
        }[];
      }[];
      envelopes: { type: string; label?: string }[];
    };
    const parts = json.messages.flatMap((message) => message.content);
    assert.deepEqual(
      parts.filter((part) => part.type === 'text').map((part) => part.text),
      [HOSTILE, HOSTILE],
    );
    assert.deepEqual(parts.find((part) => part.type === 'tool-result')?.output, HOSTILE);
    assert.deepEqual(parts.find((part) => part.callId === CALL)?.input, {
      note: HOSTILE,
      nested: [HOSTILE],
    });
    assert.equal(parts.find((part) => part.callId === CALL)?.toolName, TOOL);
    assert.equal(
      json.envelopes.find((envelope) => envelope.type === 'session-meta')?.label,
      HOSTILE,
    );
  });

  test('revive: the plan, what is left alone and the refusal are escaped; nothing is written', async () => {
    const before = await snapshotFolder(folder);
    const result = await runCli(['revive', 'runs'], { cwd: folder });
    assert.deepEqual(await snapshotFolder(folder), before, 'nothing written');
    assert.equal(result.code, 2, result.stderr);
    assertTerminalSafe(result.stdout, 'revive stdout');
    assertTerminalSafe(result.stderr, 'revive stderr');
    assert.ok(result.stdout.includes('revive main (A\\x1b[2J'), result.stdout);
    assert.ok(
      result.stdout.includes(
        'answer rm\\x1b[8m -rf\\u202e call_\\x1b[1Ax (side-effect) as interrupted',
      ),
      result.stdout,
    );
    assert.match(result.stdout, /Left alone: runs\/damaged\.jsonl: unreadable \(.*\\x1b\]52;/);
    assert.match(result.stderr, /--agents MODULE is needed .*agent types: A\\x1b\[2J/);
    assert.ok(!hasStackTrace(result.stderr));
  });
});

describe('status lines up labels of wide characters', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    // The last is 60 columns wide: cut to fit 40, a wide character never split.
    const labels = [
      'ab',
      '報告書を書く',
      'e\u0301te\u0301',
      '🚀 launch',
      'ＦＵＬＬ',
      '漢'.repeat(30),
    ];
    for (const [index, label] of labels.entries()) {
      const bodies: RecordBody[] = [
        {
          type: 'session-meta',
          agentId: `r${index}`,
          agentType: 'main',
          label,
          model: 'test:model',
        },
        textMessage('user', 'hi'),
      ];
      await writeFile(join(folder, `r${index}.jsonl`), buildTranscript(bodies).bytes);
    }
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('every row’s STATE column starts at the same display column', async () => {
    const result = await runCli(['status', '.'], { cwd: folder });
    assert.equal(result.code, 3, result.stderr);
    const lines = result.stdout.split('\n');
    const rows = lines.filter((line) => /^(RUN|r\d)/.test(line));
    assert.equal(rows.length, 7, result.stdout);
    assert.ok(result.stdout.includes(`${'漢'.repeat(19)}…`), result.stdout);
    // Widths counted by hand for these characters: CJK and fullwidth 2, the rocket 2, the
    // combining acute 0 — independently of the code under test.
    const width = (text: string): number =>
      [...text].reduce((sum, char) => {
        const code = char.codePointAt(0) as number;
        if (code === 0x301) return sum;
        if (
          (code >= 0x3000 && code <= 0x9fff) ||
          (code >= 0xff01 && code <= 0xff60) ||
          code === 0x1f680
        ) {
          return sum + 2;
        }
        return sum + 1;
      }, 0);
    const columns = rows.map((row) => {
      const at = row.search(/STATE|revivable/);
      assert.ok(at > 0, row);
      return width(row.slice(0, at));
    });
    assert.equal(new Set(columns).size, 1, `${columns.join(', ')}\n${result.stdout}`);
  });
});

describe('show of a tool input nested 100,000 levels deep', () => {
  let folder = '';
  const depth = 100_000;
  before(async () => {
    folder = await temporaryFolder();
    const head = buildTranscript([
      {
        type: 'session-meta',
        agentId: 'main',
        agentType: 'main',
        label: 'deep',
        model: 'test:model',
      },
      textMessage('user', 'go'),
    ]);
    await writeFile(join(folder, 'deep.jsonl'), Buffer.concat([head.bytes, deepLine(depth)]));
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('the fault: the line parses, and JSON.stringify of it overflows the stack', () => {
    const line = deepLine(depth).toString('utf8');
    const parsed = JSON.parse(`${line.slice(0, line.lastIndexOf(',"crc"'))}}`) as unknown;
    assert.throws(() => JSON.stringify(parsed), RangeError);
  });

  test('show prints it cut with a marker, exit 0, no internal error', async () => {
    const result = await runCli(['show', 'deep.jsonl'], { cwd: folder });
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /internal error/);
    assert.ok(
      result.stdout.includes(
        `→ t deep ${'['.repeat(64)}… (truncated: nested deeper than 64)${']'.repeat(64)}`,
      ),
      result.stdout.slice(0, 400),
    );
  });

  test('show --json prints it whole and exact', async () => {
    const result = await runCli(['show', 'deep.jsonl', '--json'], { cwd: folder });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stdout.includes(`"input":${'['.repeat(depth)}1${']'.repeat(depth)}}`));
    assert.doesNotThrow(() => JSON.parse(result.stdout));
  });

  test('status reads it', async () => {
    const result = await runCli(['status', 'deep.jsonl', '--json'], { cwd: folder });
    assert.equal(result.code, 3, result.stderr);
  });
});

describe('run: progress lines and the final answer from a hostile model are escaped', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    const scripted = join(REPO, 'src/demo/prompt-model.ts');
    await writeFile(
      join(folder, 'agents.ts'),
      `import { createPromptModel } from ${JSON.stringify(scripted)};
const HOSTILE = ${JSON.stringify(HOSTILE)};
const done = (prompt) => prompt.turns.some((turn) => turn.toolResults.length > 0);
export default {
  main: {
    description: 'A model whose every word is hostile',
    system: 'main',
    model: createPromptModel({
      script: (prompt) =>
        done(prompt)
          ? { text: HOSTILE + '\\nsecond line' }
          : {
              text: HOSTILE,
              toolCalls: [
                { toolName: ${JSON.stringify(TOOL)}, input: { note: HOSTILE } },
                { toolName: 'spawn_agent', input: { agentType: 'worker', label: HOSTILE, task: HOSTILE } },
              ],
            },
    }),
  },
  worker: {
    description: 'A child',
    system: 'worker',
    canSpawn: false,
    model: createPromptModel({ script: () => ({ text: HOSTILE }) }),
  },
};
`,
    );
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  test('stderr and stdout hold no raw control, escape or bidi character', async () => {
    const result = await runCli(['run', '--agents', 'agents.ts', '--out', 'h.jsonl', 'go'], {
      cwd: folder,
    });
    assert.equal(result.code, 0, result.stderr);
    assertTerminalSafe(result.stdout, 'run stdout');
    assertTerminalSafe(result.stderr, 'run stderr');
    assert.match(result.stderr, /says: A\\x1b\[2J/);
    assert.match(result.stderr, /→ rm\\x1b\[8m -rf\\u202e/);
    assert.match(result.stderr, /started \(worker, "A\\x1b\[2J/);
    assert.equal(result.stdout.split('\n').at(-2), 'second line', 'newlines of the answer kept');
    assert.ok(result.stdout.startsWith('A\\x1b[2J'), result.stdout);
  });
});
