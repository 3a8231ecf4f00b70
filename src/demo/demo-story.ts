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

/** Runs an `llm-agent` command line in-process and resolves to its exit code. */
type RunCommand = (argv: string[], io: CommandIo) => Promise<number>;

/** The demo's narration: where it runs, how it names things for the user, the claims so far. */
interface Narration {
  io: CommandIo;
  folder: string;
  /** The lead's transcript. */
  transcript: string;
  /** Where the agents' tools write. */
  workspace: string;
  /** How the user started the demo, so that every command it prints pastes as is. */
  cli: string;
  /** A path as the user should type it: relative to their folder when inside it, quoted. */
  shown(path: string): string;
  /** Print a claim with ✓ or ✗, and keep it for the verdict. */
  check(claim: string, held: boolean): void;
  heading(text: string): void;
  checks: Check[];
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
    command: RunCommand;
  },
): Promise<number> {
  const story = narration(folder, io);
  introduce(story, options.stopAfterCrash);
  const halted = await crashRun(story);
  if (halted === null) return EXIT.failure;

  const { cli, shown } = story;
  story.heading(`Step 3 — look before spending anything: ${cli} status ${shown(folder)}`);
  const statusCode = await options.command(['status', folder], indented(io));
  writeLine(io.stdout, io.out.dim(`  (exit code ${statusCode}: 3 means revivable runs exist)`));
  story.check('status found revivable runs', statusCode === EXIT.revivable);
  if (options.stopAfterCrash) return leaveCrashed(story);

  story.heading(
    `Step 4 — revive the tree and run it to the end: ${cli} revive ${shown(story.transcript)} --yes`,
  );
  writeLine(
    io.stdout,
    io.out.dim(
      '  (children before parents; each revived child answers its parent’s pending task_wait)',
    ),
  );
  const reviveCode = await options.command(['revive', story.transcript, '--yes'], indented(io));
  story.check('every revived run finished', reviveCode === EXIT.ok);
  await showInterrupted(story, halted.path);
  await checkFinished(story, options.command);
  const code = verdict(story.checks, io);
  writeLine(
    io.stdout,
    `Look around: ${cli} status ${shown(folder)}; ${cli} show ${shown(story.transcript)} --envelopes`,
  );
  return code;
}

/** The narration of a demo in `folder`, with no claim made yet. */
function narration(folder: string, io: CommandIo): Narration {
  const out = io.out;
  const checks: Check[] = [];
  return {
    io,
    folder,
    transcript: join(folder, 'lead.jsonl'),
    workspace: join(folder, 'workspace'),
    cli: io.invocation ?? 'llm-agent',
    shown: (path) => {
      const inside = relative(io.cwd, path);
      return quote(inside === '' ? '.' : inside.startsWith('..') ? path : inside);
    },
    check: (claim, held) => {
      checks.push({ claim, held });
      writeLine(io.stdout, `  ${held ? out.green('✓') : out.red('✗')} ${claim}`);
    },
    heading: (text) => {
      writeLine(io.stdout);
      writeLine(io.stdout, out.bold(text));
    },
    checks,
  };
}

/** The title, the folder's layout and why the scripted model decides alike in both processes. */
function introduce({ io, folder }: Narration, stopAfterCrash: boolean): void {
  const out = io.out;
  writeLine(
    io.stdout,
    out.bold(
      stopAfterCrash
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
}

/**
 * Steps 1 and 2: the run started in its own process and SIGKILLed while a writer's
 * `write_file` is half on disk. The half-written file, or null when the run never got there
 * (a failed check says so).
 */
async function crashRun(story: Narration): Promise<HalfWrittenMessage | null> {
  const { io, cli, shown, transcript } = story;
  story.heading('Step 1 — start the run in its own process');
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
    // What it runs, --id aside (the type, by default): pasted, it starts the same run.
    `  $ ${cli} run --agents ${shown(agentsPath)} --type lead --label Report --out ${shown(transcript)} ${quote(TASK)}`,
  );
  writeLine(io.stdout, io.out.dim('  (its progress is on stderr, marked │)'));
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
    story.check(
      `the run stopped half-way through write_file ${HALT_AT} (it ended instead: ${ended.code ?? ended.signal})`,
      false,
    );
    return null;
  }
  // The story is a lead waiting on its writers when the process dies: its task_wait durable.
  // On a loaded machine the lead's turn can come a moment after the writer's half-write.
  await untilJoining(transcript);
  const onDisk = await stat(join(story.workspace, halted.path)).then(
    (stats) => stats.size,
    () => -1,
  );
  writeLine(
    io.stdout,
    `  A writer is in the middle of write_file ${halted.path}: ${halted.bytesWritten} of ${halted.bytesTotal} bytes are on disk.`,
  );

  story.heading('Step 2 — kill it (SIGKILL: no cleanup, no goodbye)');
  child.kill('SIGKILL');
  const ended = await exitOf(child);
  writeLine(
    io.stdout,
    `  child pid ${halted.pid} exit signal: ${ended.signal ?? 'none'} (exit code ${ended.code ?? 'none'})`,
  );
  story.check(
    'the run process was killed by SIGKILL while the tool call was in flight',
    ended.signal === 'SIGKILL',
  );
  story.check(
    `${halted.path} was left half-written (${onDisk} of ${halted.bytesTotal} bytes)`,
    onDisk >= 0 && onDisk < halted.bytesTotal,
  );
  return halted;
}

/**
 * `--stop-after-crash`: check what revive would do (the plan a person is asked to confirm),
 * give the verdict so far, and tell the user how to revive the tree left in the folder.
 */
async function leaveCrashed(story: Narration): Promise<number> {
  const { io, cli, shown, folder, transcript } = story;
  const plan = planTreeRevival(
    await inspectTree(await findTranscripts([folder], folder), DEFAULT_MAX_REVIVALS, io.cwd),
  );
  const [writer, lead] = plan.revivals;
  story.check(
    'revive would answer the writer’s write_file as interrupted (outcome unknown, NOT retried), then revive the lead',
    plan.revivals.length === 2 &&
      writer?.interrupt.map((call) => call.toolName).join(' ') === 'write_file' &&
      lead?.node.path === transcript,
  );
  const code = verdict(story.checks, io);
  if (code !== EXIT.ok) return code;
  writeLine(
    io.stdout,
    `Stopped after the crash: nothing was revived, the crashed tree is left in ${shown(folder)}. Revive it:`,
  );
  const next: [command: string, what: string][] = [
    [`${cli} ui ${shown(folder)}`, 'a web page with the tree and the plan; Confirm revives it'],
    [`${cli} revive ${shown(transcript)} --yes`, 'the same, in the terminal'],
  ];
  const width = Math.max(...next.map(([command]) => command.length));
  for (const [command, what] of next) {
    writeLine(io.stdout, `  ${command.padEnd(width)}  ${io.out.dim(what)}`);
  }
  writeLine(io.stdout, io.out.dim('(the demo’s agents are built in: neither needs --agents)'));
  return code;
}

/** Step 5: the revived writer's conversation from the interrupted call on, and its claims. */
async function showInterrupted(story: Narration, file: string): Promise<void> {
  const { io, cli, shown } = story;
  story.heading('Step 5 — what the interrupted writer saw when it came back');
  const found = await interruptedStory(story.folder, file);
  if (found === null) {
    story.check('a transcript holds the interrupted call answered as outcome-unknown', false);
    return;
  }
  writeLine(io.stdout, `  $ ${cli} show ${shown(found.path)}   (from the interrupted call on)`);
  io.stdout.write(
    conversationText(found.messages.slice(found.from), io.out, { maxValueLength: 400 })
      .split('\n')
      .map((line) => (line === '' ? line : `  ${line}`))
      .join('\n'),
  );
  story.check(
    `the interrupted write_file reached the model as an error result: "${INTERRUPTED_MESSAGE.slice(0, 60)}…"`,
    found.interruptedAt >= 0,
  );
  story.check(
    'the model read the file (read_file) before writing it again',
    found.readAt > found.interruptedAt && found.rewriteAt > found.readAt,
  );
  story.check(
    'the system never replayed the write: the second write_file is the model’s own, after its check',
    found.systemReplays === 0 && found.rewriteAt > found.readAt,
  );
}

/** Step 6: `status` says every run finished, and the report and its sections are whole. */
async function checkFinished(story: Narration, command: RunCommand): Promise<void> {
  const { io, folder, workspace } = story;
  story.heading(`Step 6 — afterwards: ${story.cli} status ${story.shown(folder)}`);
  const finalCode = await command(['status', folder], indented(io));
  story.check('every run is finished (status exit code 0)', finalCode === EXIT.ok);
  const sections = await Promise.all(
    DEMO_SECTIONS.map(async (section) => ({
      section,
      content: await readFile(join(workspace, section.file), 'utf8').catch(() => ''),
    })),
  );
  story.check(
    `${DEMO_SECTIONS.map((section) => section.file).join(' and ')} are complete`,
    sections.every(({ section, content }) => content === sectionContent(section.title)),
  );
  const report = await readFile(join(workspace, DEMO_REPORT), 'utf8').catch(() => '');
  story.check(
    `${DEMO_REPORT} holds both sections`,
    sections.every(({ section }) => report.includes(sectionContent(section.title))),
  );
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
