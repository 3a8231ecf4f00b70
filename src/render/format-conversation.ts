/**
 * `show` output: a conversation as the model sees it, for people. Pure. Everything taken from
 * the transcript is made safe for a terminal (terminal-safe.ts) before it is coloured, and a
 * tool input or output is rendered without recursion and cut below {@link MAX_VALUE_DEPTH}
 * levels, so that no nesting overflows the stack.
 *
 * @module
 */
import type { ViewMessage } from '../transcript/conversation-view.ts';
import type { ForeignRecord, JsonValue, TranscriptRecord } from '../transcript/records.ts';
import { serializeJson } from './json-text.ts';
import { terminalSafe, terminalSafeLines } from './terminal-safe.ts';
import type { Style } from './terminal-style.ts';
import { idempotencyLabel } from './idempotency-label.ts';

/**
 * The deepest nesting of a tool input or output that `show` prints; deeper containers are
 * replaced by `… (truncated: nested deeper than 64)` (`show --json` prints them whole).
 *
 * @example
 * serializeJson(input, { maxDepth: MAX_VALUE_DEPTH });
 */
export const MAX_VALUE_DEPTH = 64;

/**
 * Options of {@link conversationText}.
 *
 * @example
 * // `llm-agent show --envelopes --full`:
 * conversationText(view, style, { envelopes: records, maxValueLength: 0 });
 */
export interface ConversationTextOptions {
  /** Envelopes to interleave by seq (dispatch, settle, revival, meta, checkpoint…). */
  envelopes?: (TranscriptRecord | ForeignRecord)[];
  /** Longest text shown for one tool input or output before it is cut (default 400; 0: never). */
  maxValueLength?: number;
}

/**
 * The conversation as readable text: one block per turn, headed by its role; turns the system
 * wrote (a revival notice, a background delivery, a compaction summary) are marked as such;
 * tool calls (`→`) and results (`←`, errors marked) are shown with their ids.
 *
 * @example
 * process.stdout.write(conversationText(conversationView(records), style));
 */
export function conversationText(
  messages: ViewMessage[],
  style: Style,
  options: ConversationTextOptions = {},
): string {
  const limit = options.maxValueLength ?? 400;
  const envelopes = [...(options.envelopes ?? [])].sort((left, right) => left.seq - right.seq);
  let nextEnvelope = 0;
  const lines: string[] = [];
  const flushEnvelopes = (beforeSeq: number): void => {
    while (nextEnvelope < envelopes.length) {
      const envelope = envelopes[nextEnvelope];
      if (envelope === undefined || envelope.seq >= beforeSeq) break;
      lines.push(style.dim(`  · ${envelopeLine(envelope)}`));
      nextEnvelope += 1;
    }
  };
  for (const message of messages) {
    flushEnvelopes(message.seq);
    const injected = message.extras?.injected;
    const heading = terminalSafe(
      injected === undefined
        ? message.role
        : `${message.role} · written by the system (${injected})`,
    );
    const colour = injected !== undefined ? style.magenta : roleColour(message.role, style);
    lines.push(colour(style.bold(`── ${heading} `)) + style.dim(`[seq ${message.seq}]`));
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
          lines.push(indent(terminalSafeLines(part.text)));
          break;
        case 'reasoning':
          lines.push(style.dim(indent(`(reasoning) ${terminalSafeLines(part.text)}`)));
          break;
        case 'tool-call':
          lines.push(
            `  ${style.cyan('→')} ${style.bold(terminalSafe(part.toolName))} ${style.dim(
              terminalSafe(part.callId),
            )} ${cut(render(part.input), limit)}`,
          );
          break;
        case 'tool-result': {
          const mark = part.isError ? style.red('← error') : style.green('←');
          lines.push(
            `  ${mark} ${style.bold(terminalSafe(part.toolName))} ${style.dim(
              terminalSafe(part.callId),
            )} ${cut(render(part.output), limit)}`,
          );
          break;
        }
      }
    }
  }
  flushEnvelopes(Number.POSITIVE_INFINITY);
  return `${lines.join('\n')}\n`;
}

/**
 * One envelope in a line, made safe for a terminal (every field of it comes from the file).
 *
 * @example
 * envelopeLine(dispatchRecord); // '[seq 7] tool-dispatched write_file call_1 (side-effect)'
 */
export function envelopeLine(record: TranscriptRecord | ForeignRecord): string {
  return terminalSafe(envelopeText(record));
}

function envelopeText(record: TranscriptRecord | ForeignRecord): string {
  const head = `[seq ${record.seq}] ${record.type}`;
  if ('unknown' in record) return `${head} (unknown record type, ignored)`;
  switch (record.type) {
    case 'session-meta':
      return `${head} agent ${record.agentId} (${record.agentType}, "${record.label}") model ${record.model}${
        record.parent === undefined
          ? ''
          : ` parent ${record.parent.transcript} via ${record.parent.callId}`
      }`;
    case 'tool-dispatched':
      return `${head} ${record.toolName} ${record.callId} (${idempotencyLabel(record)})${
        record.idempotencyKey === undefined ? '' : ` key ${record.idempotencyKey}`
      }${record.joins === undefined ? '' : ` joins ${record.joins.join(', ')}`}`;
    case 'tool-settled':
      return `${head} ${record.callId} ${record.status}${record.reason === undefined ? '' : ` / ${record.reason}`}`;
    case 'run-revived':
      return `${head} #${record.ordinal} of ${record.maxRevivals} after seq ${record.afterSeq}${listed(
        ' interrupted',
        record.interrupted,
      )}${listed(' completed-unpersisted', record.completedUnpersisted)}${listed(' orphaned', record.orphaned)}${listed(
        ' reconciled',
        (record.reconciled ?? []).map((asked) => `${asked.callId} ${asked.answer}`),
      )}`;
    case 'compaction':
      return `${head} replaces seq ${record.fromSeq}–${record.toSeq}`;
    case 'run-failed':
      return `${head} ${record.cause} on backend ${record.backend} (${record.model}) after ${record.attempts} attempts: ${record.error}${
        record.retryAfterMs === undefined ? '' : ` (retry after ${record.retryAfterMs} ms)`
      }`;
    case 'run-stopped':
      return `${head} ${record.reason}`;
    case 'checkpoint':
      return `${head}${record.tailRepair === undefined ? '' : ` after repairing a torn tail (${record.tailRepair.tornBytes} bytes kept in ${record.tailRepair.sidecar})`}`;
    default:
      return head;
  }
}

function listed(label: string, ids: string[]): string {
  return ids.length === 0 ? '' : `${label}: ${ids.join(', ')}`;
}

function roleColour(role: string, style: Style): (text: string) => string {
  switch (role) {
    case 'user':
      return style.green;
    case 'assistant':
      return style.cyan;
    case 'tool':
      return style.yellow;
    default:
      return (text) => text;
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/**
 * JSON for inputs and outputs alike, so that a string output shows as the string it is; made
 * safe for a terminal after the JSON (which escapes C0 controls but not C1, DEL or bidi).
 */
function render(value: JsonValue): string {
  return serializeJson(value, { maxDepth: MAX_VALUE_DEPTH });
}

/** At most `limit` characters of the JSON (never half a surrogate pair), then made safe. */
function cut(text: string, limit: number): string {
  if (limit === 0 || text.length <= limit) return terminalSafe(text);
  const end = /[\ud800-\udbff]/.test(text.charAt(limit - 1)) ? limit - 1 : limit;
  return `${terminalSafe(text.slice(0, end))}… (${text.length - end} more characters; --full shows all)`;
}
