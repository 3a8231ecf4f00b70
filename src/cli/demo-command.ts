import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_REPORT, DEMO_SECTIONS, sectionContent } from '../demo/demo-script.ts';
import type { HalfWrittenMessage } from '../demo/halting-demo-agents.ts';
import { INTERRUPTED_MESSAGE } from '../revival/index.ts';
import { conversationView } from '../transcript/conversation-view.ts';
import { peek } from '../transcript/peek.ts';
import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import { type Command, parseCommandLine, writeLine } from './command.ts';
import type { CommandIo } from '../runs/command-io.ts';
import { EXIT } from '../render/exit-codes.ts';
import { findTranscripts } from '../runs/find-transcripts.ts';
import { conversationText } from '../render/format-conversation.ts';
import { quote } from '../render/format-status.ts';
import { inspectTree } from '../runs/inspect-tree.ts';
import { prefixedStream } from '../render/prefixed-stream.ts';
import { reviveCommand } from './revive-command.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { statusCommand } from './status-command.ts';
import { planTreeRevival } from '../runs/tree-revival-plan.ts';
import { UserError } from '../runs/user-error.ts';

const HALT_AT = 'section-2.md';
const TASK =
  'Put together report.md: a two-section briefing on crash-safe agent runs. Give each section to a writer, then assemble the report.';

/**
 * `llm-agent demo [DIR]`: the whole story offline. A lead agent and two writers, driven by the
 * scripted model, run in a child process that is SIGKILLed while a writer's `write_file` is
 * half-way through its file; then `status` shows the interrupted tree, `revive --yes` brings
 * it back, and it runs to the end — the interrupted call reaching the model as outcome
 * unknown, and the model reading the file before writing it again. Every claim is checked and
 * the exit code says whether all held. With `--stop-after-crash` it stops after `status`,
 * leaving the crashed tree for a person to revive (with `llm-agent ui` or `revive`).
 *
 * @example
 * await demoCommand.run(['/tmp/demo'], io);
 * await demoCommand.run(['/tmp/crashed', '--stop-after-crash'], io); // then: llm-agent ui /tmp/crashed
 */
export const demoCommand: Command = {
  name: 'demo',
  help: `Usage: llm-agent demo [DIR] [--stop-after-crash]
       llm-agent demo --database URL

Run the offline demo in DIR (default: a new temporary folder; if given, DIR must be empty
or not exist). No API key and no network: the model is scripted and ships with the package.

  1. A lead agent delegates two sections of a report to two writer agents (spawn_agent,
     task_wait); the tools write real files in DIR/workspace/.
  2. The run is a child process (llm-agent run); while a writer's write_file has put half
     of ${HALT_AT} on disk, the demo SIGKILLs the process: no cleanup, no goodbye.
  3. llm-agent status DIR shows the interrupted tree.
  4. llm-agent revive DIR/lead.jsonl --yes revives it, children before parents, and runs
     it to the end: the interrupted call reaches the model as "interrupted, outcome
     unknown, NOT retried", and the model reads the file before writing it again.
  5. The demo checks every claim it made and prints the result.

The transcripts stay in DIR: try llm-agent status DIR and llm-agent show on them.

With --stop-after-crash, steps 1 to 3 only: the demo checks its claims so far (the process
was killed mid-write_file, the file is half-written, the tree is revivable and revive would
answer the call as interrupted) and stops, leaving the crashed tree in DIR for you to revive:
in a browser with llm-agent ui DIR (the plan, and a Confirm button), or with llm-agent revive
DIR/lead.jsonl --yes. The demo's agents are built in: neither needs --agents.

With --database URL, the scale-out story on PostgreSQL instead (in a new schema of its own):
two worker processes serve a submitted run; the one that takes it is SIGKILLed inside its
deploy; the other finds the expired lease and fences the run, which waits for approval; the
demo approves (printing what a person is asked) and the surviving worker revives it to its end,
the deploy answered as interrupted, never run again; a third worker paused (SIGSTOP) inside
another deploy past its lease is fenced out, and refused when it resumes.

Options:
  --stop-after-crash  stop after the crash and status (steps 1 to 3), leaving the tree to revive
  --database URL      the scale-out story on PostgreSQL (a new schema of its own)
  -h, --help          show this help

Exit codes: 0 every check held; 1 a check failed (the line says which); 2 DIR is not empty
or a bad option.
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('demo', argv, {
      database: { type: 'string' },
      'stop-after-crash': { type: 'boolean' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    if (typeof values.database === 'string') {
      if (positionals.length > 0) throw new UserError('demo: --database takes no DIR');
      if (values['stop-after-crash'] === true) {
        throw new UserError('demo: --stop-after-crash is for the offline demo, not --database');
      }
      const { databaseDemo } = await import('./database-demo.ts');
      return databaseDemo(io, values.database);
    }
    if (positionals.length > 1)
      throw new UserError('demo: give at most one DIR (see llm-agent demo --help)');
    const folder = await prepareFolder(positionals[0], io);
    return runDemo(folder, io, { stopAfterCrash: values['stop-after-crash'] === true });
  },
};

async function prepareFolder(given: string | undefined, io: CommandIo): Promise<string> {
  if (given === undefined) return mkdtemp(join(tmpdir(), 'llm-agent-demo-'));
  const folder = resolve(io.cwd, given);
  const entries = await readdir(folder).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    if (error.code === 'ENOTDIR') throw new UserError(`${given}: not a folder`);
    throw new UserError(`${given}: cannot read (${error.code})`);
  });
  if (entries === null) await mkdir(folder, { recursive: true, mode: 0o700 });
  else if (entries.length > 0) {
    throw new UserError(`${given}: not empty; the demo needs an empty or new folder`);
  }
  return folder;
}

/** One claim the demo makes, and whether it held. */
interface Check {
  claim: string;
  held: boolean;
}

async function runDemo(
  folder: string,
  io: CommandIo,
  options: {
    /** Stop after `status`, the crashed tree left in the folder for a person to revive. */
    stopAfterCrash: boolean;
  },
): Promise<number> {
  const out = io.out;
  const transcript = join(folder, 'lead.jsonl');
  const workspace = join(folder, 'workspace');
  const shown = (path: string): string => {
    const inside = relative(io.cwd, path);
    return quote(inside === '' ? '.' : inside.startsWith('..') ? path : inside);
  };
  const checks: Check[] = [];
  const check = (claim: string, held: boolean): void => {
    checks.push({ claim, held });
    writeLine(io.stdout, `  ${held ? out.green('✓') : out.red('✗')} ${claim}`);
  };
  const heading = (text: string): void => {
    writeLine(io.stdout);
    writeLine(io.stdout, out.bold(text));
  };

  writeLine(
    io.stdout,
    out.bold(
      options.stopAfterCrash
        ? 'llm-agent demo — a run killed in the middle of a tool call, left for you to revive'
        : 'llm-agent demo — a run killed in the middle of a tool call, and revived',
    ),
  );
  writeLine(io.stdout, `Folder: ${folder}`);
  writeLine(io.stdout, '  lead.jsonl, lead.agents/   the transcripts (one per run)');
  writeLine(io.stdout, '  workspace/                 the files the agents write');
  writeLine(
    io.stdout,
    out.dim(
      'No API key, no network: the model is a script whose every answer is a pure function of',
    ),
  );
  writeLine(
    io.stdout,
    out.dim(
      'the conversation it is sent — so the process that dies and the one that revives decide alike.',
    ),
  );

  heading('Step 1 — start the run in its own process');
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const mainPath = fileURLToPath(new URL(`./main.${extension}`, import.meta.url));
  const agentsPath = fileURLToPath(
    new URL(`../demo/halting-demo-agents.${extension}`, import.meta.url),
  );
  const runArgs = [
    'run',
    '--agents',
    agentsPath,
    '--type',
    'lead',
    '--id',
    'lead',
    '--label',
    'Report',
    '--out',
    transcript,
    TASK,
  ];
  writeLine(
    io.stdout,
    `  $ llm-agent run --agents ${shown(agentsPath)} --type lead --out ${shown(transcript)} "${TASK}"`,
  );
  writeLine(io.stdout, out.dim('  (its progress is on stderr, marked │)'));
  const child = spawn(process.execPath, [mainPath, ...runArgs], {
    cwd: io.cwd,
    env: { ...io.env, LLM_AGENT_DEMO_HALT_AT: HALT_AT },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.stderr?.pipe(prefixedStream(io.stderr, '  │ '));
  child.stdout?.pipe(prefixedStream(io.stderr, '  │ '));
  const halted = await waitForHalf(child);
  if (halted === null) {
    const ended = await exitOf(child);
    check(
      `the run stopped half-way through write_file ${HALT_AT} (it ended instead: ${ended.code ?? ended.signal})`,
      false,
    );
    return EXIT.failure;
  }
  // The story is a lead waiting on its writers when the process dies: its task_wait durable.
  // On a loaded machine the lead's turn can come a moment after the writer's half-write.
  await untilJoining(transcript);
  const onDisk = await stat(join(workspace, halted.path)).then(
    (stats) => stats.size,
    () => -1,
  );
  writeLine(
    io.stdout,
    `  A writer is in the middle of write_file ${halted.path}: ${halted.bytesWritten} of ${halted.bytesTotal} bytes are on disk.`,
  );

  heading('Step 2 — kill it (SIGKILL: no cleanup, no goodbye)');
  child.kill('SIGKILL');
  const ended = await exitOf(child);
  writeLine(
    io.stdout,
    `  child pid ${halted.pid} exit signal: ${ended.signal ?? 'none'} (exit code ${ended.code ?? 'none'})`,
  );
  check(
    'the run process was killed by SIGKILL while the tool call was in flight',
    ended.signal === 'SIGKILL',
  );
  check(
    `${halted.path} was left half-written (${onDisk} of ${halted.bytesTotal} bytes)`,
    onDisk >= 0 && onDisk < halted.bytesTotal,
  );

  heading(`Step 3 — look before spending anything: llm-agent status ${shown(folder)}`);
  const statusCode = await statusCommand.run([folder], indented(io));
  writeLine(io.stdout, out.dim(`  (exit code ${statusCode}: 3 means revivable runs exist)`));
  check('status found revivable runs', statusCode === EXIT.revivable);
  if (options.stopAfterCrash) {
    // What the person will be shown and asked to confirm: the plan revive makes of the tree.
    const plan = planTreeRevival(
      await inspectTree(await findTranscripts([folder], folder), DEFAULT_MAX_REVIVALS, io.cwd),
    );
    const [writer, lead] = plan.revivals;
    check(
      'revive would answer the writer’s write_file as interrupted (outcome unknown, NOT retried), then revive the lead',
      plan.revivals.length === 2 &&
        writer?.interrupt.map((call) => call.toolName).join(' ') === 'write_file' &&
        lead?.node.path === transcript,
    );
    const code = verdict(checks, io);
    if (code !== EXIT.ok) return code;
    writeLine(
      io.stdout,
      `Stopped after the crash: nothing was revived, the crashed tree is left in ${shown(folder)}. Revive it:`,
    );
    const next: [command: string, what: string][] = [
      [
        `llm-agent ui ${shown(folder)}`,
        'a web page with the tree and the plan; Confirm revives it',
      ],
      [`llm-agent revive ${shown(transcript)} --yes`, 'the same, in the terminal'],
    ];
    const width = Math.max(...next.map(([command]) => command.length));
    for (const [command, what] of next) {
      writeLine(io.stdout, `  ${command.padEnd(width)}  ${out.dim(what)}`);
    }
    writeLine(io.stdout, out.dim('(the demo’s agents are built in: neither needs --agents)'));
    return code;
  }

  heading(
    `Step 4 — revive the tree and run it to the end: llm-agent revive ${shown(transcript)} --yes`,
  );
  writeLine(
    io.stdout,
    out.dim(
      '  (children before parents; each revived child answers its parent’s pending task_wait)',
    ),
  );
  const reviveCode = await reviveCommand.run([transcript, '--yes'], indented(io));
  check('every revived run finished', reviveCode === EXIT.ok);

  heading('Step 5 — what the interrupted writer saw when it came back');
  const story = await interruptedStory(folder, halted.path);
  if (story === null) {
    check('a transcript holds the interrupted call answered as outcome-unknown', false);
  } else {
    writeLine(
      io.stdout,
      `  $ llm-agent show ${shown(story.path)}   (from the interrupted call on)`,
    );
    io.stdout.write(
      conversationText(story.messages.slice(story.from), io.out, { maxValueLength: 400 })
        .split('\n')
        .map((line) => (line === '' ? line : `  ${line}`))
        .join('\n'),
    );
    check(
      `the interrupted write_file reached the model as an error result: "${INTERRUPTED_MESSAGE.slice(0, 60)}…"`,
      story.interruptedAt >= 0,
    );
    check(
      'the model read the file (read_file) before writing it again',
      story.readAt > story.interruptedAt && story.rewriteAt > story.readAt,
    );
    check(
      'the system never replayed the write: the second write_file is the model’s own, after its check',
      story.systemReplays === 0 && story.rewriteAt > story.readAt,
    );
  }

  heading(`Step 6 — afterwards: llm-agent status ${shown(folder)}`);
  const finalCode = await statusCommand.run([folder], indented(io));
  check('every run is finished (status exit code 0)', finalCode === EXIT.ok);
  const sections = await Promise.all(
    DEMO_SECTIONS.map(async (section) => ({
      section,
      content: await readFile(join(workspace, section.file), 'utf8').catch(() => ''),
    })),
  );
  check(
    `${DEMO_SECTIONS.map((section) => section.file).join(' and ')} are complete`,
    sections.every(({ section, content }) => content === sectionContent(section.title)),
  );
  const report = await readFile(join(workspace, DEMO_REPORT), 'utf8').catch(() => '');
  check(
    `${DEMO_REPORT} holds both sections`,
    sections.every(({ section }) => report.includes(sectionContent(section.title))),
  );

  const code = verdict(checks, io);
  writeLine(
    io.stdout,
    `Look around: llm-agent status ${shown(folder)}; llm-agent show ${shown(transcript)} --envelopes`,
  );
  return code;
}

/** Say how many checks held, and return the exit code that says it. */
function verdict(checks: Check[], io: CommandIo): number {
  const failed = checks.filter((item) => !item.held);
  writeLine(io.stdout);
  writeLine(
    io.stdout,
    failed.length === 0
      ? io.out.green(io.out.bold(`All ${checks.length} checks held.`))
      : io.out.red(io.out.bold(`${failed.length} of ${checks.length} checks failed.`)),
  );
  return failed.length === 0 ? EXIT.ok : EXIT.failure;
}

/** The command I/O with stdout indented under the demo's narration. */
function indented(io: CommandIo): CommandIo {
  return { ...io, stdout: prefixedStream(io.stdout, '  ') };
}

function waitForHalf(child: ChildProcess): Promise<HalfWrittenMessage | null> {
  return new Promise((done) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(null);
    }, 60_000);
    child.on('message', (message: HalfWrittenMessage) => {
      if (message?.type !== 'half-written') return;
      clearTimeout(timer);
      done(message);
    });
    child.on('exit', () => {
      clearTimeout(timer);
      done(null);
    });
  });
}

function exitOf(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
}

/**
 * The transcript whose revival answered a call as interrupted, its conversation, and where
 * in it the interrupted answer, the model's read_file check and its rewrite stand.
 */
async function interruptedStory(
  folder: string,
  file: string,
): Promise<{
  path: string;
  messages: ReturnType<typeof conversationView>;
  from: number;
  interruptedAt: number;
  readAt: number;
  rewriteAt: number;
  systemReplays: number;
} | null> {
  for (const path of await findTranscripts([folder], folder)) {
    const read = await peek(path);
    if (!read.ok) continue;
    const revived = read.records.find(
      (record): record is TranscriptRecord & { type: 'run-revived'; interrupted: string[] } =>
        record.type === 'run-revived' &&
        Array.isArray((record as { interrupted?: unknown }).interrupted) &&
        (record as { interrupted: string[] }).interrupted.length > 0,
    );
    if (revived === undefined) continue;
    const messages = conversationView(read.records);
    const callId = revived.interrupted.find((id) =>
      messages.some((message) =>
        message.content.some(
          (part) =>
            part.type === 'tool-call' &&
            part.callId === id &&
            (part.input as { path?: unknown } | null)?.path === file,
        ),
      ),
    );
    if (callId === undefined) continue;
    const from = messages.findIndex((message) =>
      message.content.some((part) => part.type === 'tool-call' && part.callId === callId),
    );
    const interruptedAt = messages.findIndex((message) =>
      message.content.some(
        (part) =>
          part.type === 'tool-result' &&
          part.callId === callId &&
          part.isError &&
          part.output === INTERRUPTED_MESSAGE,
      ),
    );
    const callOf = (toolName: string, after: number): number =>
      messages.findIndex(
        (message, index) =>
          index > after &&
          message.role === 'assistant' &&
          message.content.some((part) => part.type === 'tool-call' && part.toolName === toolName),
      );
    const readAt = callOf('read_file', interruptedAt);
    const rewriteAt = callOf('write_file', readAt);
    return {
      path,
      messages,
      from: Math.max(from, 0),
      interruptedAt,
      readAt,
      rewriteAt,
      systemReplays: replaysBySystem(read.records, callId),
    };
  }
  return null;
}

/** Dispatches of the interrupted call's id after the crash: a replay would dispatch it again. */
function replaysBySystem(records: (TranscriptRecord | ForeignRecord)[], callId: string): number {
  return (
    records.filter(
      (record) =>
        record.type === 'tool-dispatched' && (record as { callId?: string }).callId === callId,
    ).length - 1
  );
}

/** Wait (10 s at most) until the transcript holds a durable `task_wait` dispatch. */
async function untilJoining(transcript: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const read = await peek(transcript);
    const joining =
      read.ok &&
      read.records.some(
        (record) =>
          record.type === 'tool-dispatched' &&
          'toolName' in record &&
          record.toolName === 'task_wait',
      );
    if (joining) return;
    await new Promise((done) => setTimeout(done, 20));
  }
}
