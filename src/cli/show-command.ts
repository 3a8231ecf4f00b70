import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { conversationView } from '../transcript/conversation-view.ts';
import { peek } from '../transcript/peek.ts';
import type { TornTail } from '../transcript/classify-tail.ts';
import type { ForeignRecord, TranscriptRecord } from '../transcript/records.ts';
import { type Command, parseCommandLine } from './command.ts';
import type { CommandIo } from '../runs/command-io.ts';
import { connectStore, databaseUrl } from '../runs/database-store.ts';
import { jsonText } from '../render/json-text.ts';
import { EXIT } from '../render/exit-codes.ts';
import { conversationText } from '../render/format-conversation.ts';
import { type RunRecords, runRecordsOf, runTreeHtml } from '../render/conversation-html.ts';
import { findTranscripts } from '../runs/find-transcripts.ts';
import { inspectTree } from '../runs/inspect-tree.ts';
import { walkTree } from '../render/run-node.ts';
import { DEFAULT_MAX_REVIVALS } from '../runs/default-max-revivals.ts';
import { haltSentence } from '../render/halt-text.ts';
import { emptyTailState, foldTailState } from '../transcript/tail-state.ts';
import { terminalSafe } from '../render/terminal-safe.ts';
import { UserError } from '../runs/user-error.ts';

/**
 * `llm-agent show PATH`: the conversation of one transcript as the model sees it (the
 * conversation view: compactions applied, results beside their calls), optionally with the
 * envelopes. Reads only.
 *
 * @example
 * await showCommand.run(['runs/main.jsonl', '--envelopes'], io);
 */
export const showCommand: Command = {
  name: 'show',
  help: `Usage: llm-agent show PATH [--envelopes] [--json] [--full]
       llm-agent show PATH --html [--envelopes] > run.html
       llm-agent show RUN --database URL [--schema NAME] [--envelopes] [--json] [--full]

Print the conversation recorded in the transcript PATH as the model sees it: compactions
applied, every tool result beside the call that asked for it. Each turn is headed by its
role; turns the system wrote rather than a person (the revival notice, an interrupted
call's answer, a background delivery, a compaction summary) are marked "written by the
system". Tool calls are shown as → name id input, results as ← name id output (← error
for a failure). A run that failed or was stopped ends with a line saying when, why, and
whether a person is needed before reviving it. Nothing is written.

Options:
  --envelopes  interleave the envelopes the model never sees (session-meta,
               tool-dispatched, tool-settled, run-revived, run-failed, run-stopped,
               checkpoint, compaction)
  --json       print { path, messages[, envelopes] } as JSON
  --full       do not cut long tool inputs and outputs (cut at 400 characters otherwise)
  --html       print one self-contained, offline HTML page of the run tree (PATH and
               its children in PATH-without-.jsonl.agents/, as status shows it): the
               tree with each run's state, then every run's conversation, its crash
               history and interrupted calls marked; long values fold. No script, no
               request: every string from a transcript is escaped (files only)
  --database URL  show the run RUN of the PostgreSQL store instead of a file
  --schema NAME   the store's schema (default llm_agent)
  -h, --help   show this help

Exit codes: 0 shown; 2 PATH does not exist or a bad option; 4 PATH is not a readable
transcript (the line and reason are printed).
`,
  async run(argv, io) {
    const { values, positionals } = parseCommandLine('show', argv, {
      envelopes: { type: 'boolean' },
      json: { type: 'boolean' },
      full: { type: 'boolean' },
      html: { type: 'boolean' },
      database: { type: 'string' },
      schema: { type: 'string' },
    });
    if (values.help === true) {
      io.stdout.write(this.help);
      return EXIT.ok;
    }
    if (positionals.length !== 1) {
      throw new UserError('show: give exactly one transcript PATH (see llm-agent show --help)');
    }
    const given = positionals[0] as string;
    const url = databaseUrl(values.database);
    if (values.html === true) {
      if (url !== undefined) {
        throw new UserError(
          'show: --html reads transcript files; it cannot be used with --database',
        );
      }
      if (values.json === true) throw new UserError('show: give --html or --json, not both');
      return showHtml(given, io, values.envelopes === true);
    }
    const read =
      url === undefined ? await readFile(given, io) : await readRun(given, url, values.schema, io);
    const messages = conversationView(read.records);
    const envelopes = read.records.filter((record) => record.type !== 'message');
    if (values.json === true) {
      const body: Record<string, unknown> = { path: given, messages };
      if (values.envelopes === true) body.envelopes = envelopes;
      if (read.torn !== undefined) body.tornTail = read.torn;
      io.stdout.write(`${jsonText(body, io.stdout)}\n`);
      return EXIT.ok;
    }
    if (read.records.length === 0) {
      io.stdout.write(`${io.out.dim('  · the transcript is empty: no record, no conversation')}\n`);
    } else {
      io.stdout.write(
        conversationText(messages, io.out, {
          ...(values.envelopes === true ? { envelopes } : {}),
          maxValueLength: values.full === true ? 0 : 400,
        }),
      );
    }
    // How the run stopped is no turn of the conversation, but it is what a reader asks next.
    let state = emptyTailState();
    for (const record of read.records) state = foldTailState(state, record, 0);
    if (state.halt !== null) {
      const paint = state.halt.state === 'failed' ? io.out.red : io.out.yellow;
      io.stdout.write(`${paint(`  · the run ${terminalSafe(haltSentence(state.halt))}`)}\n`);
    }
    if (read.torn !== undefined) {
      io.stdout.write(
        io.out.dim(
          `  · torn tail: ${read.torn.tornBytes} bytes after the last record (${terminalSafe(read.torn.reason)}); opening the transcript for writing repairs it\n`,
        ),
      );
    }
    return EXIT.ok;
  },
};

/**
 * `show --html`: the tree below the transcript `given` (as `status` finds and inspects it),
 * each run read in full, as one HTML page on stdout. A run below it that cannot be read is
 * said to be so on the page; the transcript named must be readable.
 */
async function showHtml(given: string, io: CommandIo, envelopes: boolean): Promise<number> {
  const shown = await readFile(given, io);
  const rootPath = await realpath(resolve(io.cwd, given));
  const roots = await inspectTree(
    await findTranscripts([given], io.cwd),
    DEFAULT_MAX_REVIVALS,
    io.cwd,
  );
  const read = new Map<string, RunRecords>();
  for (const node of walkTree(roots)) {
    if (node.path === rootPath) {
      read.set(node.path, shown);
      continue;
    }
    read.set(node.path, runRecordsOf(await peek(node.path)));
  }
  io.stdout.write(runTreeHtml(roots, read, { envelopes, generatedAt: new Date().toISOString() }));
  return EXIT.ok;
}

/** What `show` shows: the records, and a file's torn tail. */
interface ShownRecords {
  records: (TranscriptRecord | ForeignRecord)[];
  torn?: TornTail;
}

/** A transcript file's records (and its torn tail), or a one-line refusal. */
async function readFile(given: string, io: CommandIo): Promise<ShownRecords> {
  const path = resolve(io.cwd, given);
  const kind = await stat(path).then(
    (stats) => (stats.isFile() ? 'file' : 'other'),
    () => 'missing',
  );
  if (kind === 'missing') throw new UserError(`${given}: no such file`);
  if (kind === 'other') throw new UserError(`${given}: not a file (show reads one transcript)`);
  const read = await peek(path);
  if (!read.ok) {
    // The detail names the file and line itself (`<path>:<line>: cause`): say each once.
    let cause = read.detail;
    if (cause.startsWith(`${path}:`)) cause = cause.slice(path.length + 1).trimStart();
    if (read.line !== undefined && cause.startsWith(`${read.line}: `)) {
      cause = cause.slice(`${read.line}: `.length);
    }
    const where = read.line === undefined ? '' : `line ${read.line}: `;
    throw new UserError(`${given}: ${where}${cause}`, EXIT.unreadable);
  }
  return read.torn === undefined
    ? { records: read.records }
    : { records: read.records, torn: read.torn };
}

/** A run's records from the PostgreSQL store, or a one-line refusal. */
async function readRun(
  run: string,
  url: string,
  schema: unknown,
  io: CommandIo,
): Promise<ShownRecords> {
  const store = await connectStore('show', url, typeof schema === 'string' ? schema : undefined, {
    invocation: io.invocation,
  });
  try {
    const found = await store.read(run);
    if (!found.ok) {
      throw new UserError(
        `show: ${terminalSafe(found.detail)}`,
        found.reason === 'missing' ? EXIT.usage : EXIT.unreadable,
      );
    }
    return { records: found.records };
  } finally {
    await store.close();
  }
}
