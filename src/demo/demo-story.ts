import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_REPORT, DEMO_SECTIONS, sectionContent } from './demo-script.ts';
import type { HalfWrittenMessage } from './halting-demo-agents.ts';
import { INTERRUPTED_MESSAGE } from '../revival/index.ts';
import { conversationView } from '../transcript/conversation-view.ts';
import { peek } from '../transcript/peek.ts';
import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import { type CommandIo, writeLine } from '../runs/command-io.ts';
import { EXIT } from '../render/exit-codes.ts';
import { findTranscripts } from '../runs/find-transcripts.ts';
import { conversationText } from '../render/format-conversation.ts';
import { quote } from '../render/format-status.ts';
import { inspectTree } from '../runs/inspect-tree.ts';
import { prefixedStream } from '../render/prefixed-stream.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { planTreeRevival } from '../runs/tree-revival-plan.ts';

/**
 * The file the demo's run is killed while writing.
 *
 * @example
 * const half = join(folder, 'workspace', HALT_AT);
 */
export const HALT_AT = 'section-2.md';
const TASK =
  'Put together report.md: a two-section briefing on crash-safe agent runs. Give each section to a writer, then assemble the report.';

/** One claim the demo makes, and whether it held. */
interface Check {
  claim: string;
  held: boolean;
}

/**
 * The offline demo's story in `folder` (empty or new): the run killed mid-write, `status`,
 * `revive --yes`, and every claim checked; the exit code says whether all held. `command`
 * runs another `llm-agent` command in-process (the demo shows `status` and `revive` as a
 * user would see them).
 *
 * @example
 * const code = await runDemo(folder, io, { stopAfterCrash: false, command: main });
 */
export async function runDemo(
  folder: string,
  io: CommandIo,
  options: {
    /** Stop after `status`, the crashed tree left in the folder for a person to revive. */
    stopAfterCrash: boolean;
    /** Runs an `llm-agent` command line in-process and resolves to its exit code. */
    command: (argv: string[], io: CommandIo) => Promise<number>;
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
  const mainPath = fileURLToPath(new URL(`../cli/main.${extension}`, import.meta.url));
  const agentsPath = fileURLToPath(new URL(`./halting-demo-agents.${extension}`, import.meta.url));
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
  const statusCode = await options.command(['status', folder], indented(io));
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
  const reviveCode = await options.command(['revive', transcript, '--yes'], indented(io));
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
  const finalCode = await options.command(['status', folder], indented(io));
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
