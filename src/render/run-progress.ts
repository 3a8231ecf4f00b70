/**
 * Progress of running runs, one line per event worth a person's attention, on stderr. Names,
 * tool names, inputs, the model's text and errors come from the model: each is made safe for a
 * terminal (terminal-safe.ts) before it is coloured.
 *
 * @module
 */
import type { LoopEvent, RunHandle } from '../loop/types.ts';
import { serializeJson } from './json-text.ts';
import { terminalSafe } from './terminal-safe.ts';
import type { Style } from './terminal-style.ts';

/** Longest input or text shown in one progress line. */
const MAX_SHOWN = 160;

/**
 * One line for an event of the run named `name`, or null for events not worth a line
 * (text deltas are gathered by the caller and shown at the turn's end).
 *
 * @example
 * progressLine('writer-1', { type: 'tool-call-start', callId: 'c', toolName: 'read_file', input: {} }, style);
 */
export function progressLine(name: string, event: LoopEvent, style: Style): string | null {
  const who = style.dim(`[${terminalSafe(name)}]`);
  switch (event.type) {
    case 'tool-call-start':
      return `${who} ${style.cyan('→')} ${terminalSafe(event.toolName)} ${style.dim(
        shorten(serializeJson(event.input, { maxDepth: MAX_INPUT_DEPTH })),
      )}`;
    case 'tool-call-end':
      return `${who} ${event.isError ? style.red('← error from') : style.green('←')} ${terminalSafe(event.toolName)}`;
    case 'join-wait-start':
      return `${who} waiting for ${shorten(event.agentIds.join(', '))} (the pending task_wait)`;
    case 'model-error':
      return `${who} ${style.yellow('model error')} (backend ${event.backend + 1}, attempt ${event.attempt}): ${shorten(event.message)}${
        event.willRetry ? ' — retrying' : ''
      }`;
    case 'model-warning':
      return `${who} ${style.yellow('model warning')}: ${shorten(event.message)}`;
    case 'compaction-end':
      return `${who} compacted seq ${event.fromSeq}–${event.toSeq} into a summary`;
    case 'run-end': {
      const result = event.result;
      if (result.status === 'finished') return `${who} ${style.green('finished')}`;
      return `${who} ${style.red(result.status)}: ${shorten(result.error ?? result.stopReason)}`;
    }
    default:
      return null;
  }
}

/**
 * Follow a run's events and write their progress lines to `stream`; the model's text is shown
 * once per turn. With `finalAnswerShown` (the caller prints the final answer in full on the
 * same screen), the last turn's text is not shown a second time when the run finishes with it.
 * Resolves when the run ends.
 *
 * @example
 * await followRun('lead', run, process.stderr, style);
 */
export async function followRun(
  name: string,
  run: RunHandle,
  stream: NodeJS.WritableStream,
  style: Style,
  options: { finalAnswerShown?: boolean } = {},
): Promise<void> {
  let text = '';
  // A turn's text waits for the next event: only then is it known not to be the final answer.
  let held: string | null = null;
  const says = (said: string): string =>
    `${style.dim(`[${terminalSafe(name)}]`)} says: ${shorten(said)}\n`;
  for await (const event of run) {
    if (event.type === 'text-delta') {
      text += event.text;
      continue;
    }
    const finalAnswer =
      event.type === 'run-end' &&
      event.result.status === 'finished' &&
      options.finalAnswerShown === true;
    if (held !== null && !(finalAnswer && held === event.result.text.trim())) {
      stream.write(says(held));
    }
    held = null;
    if (event.type === 'turn-end' || event.type === 'run-end') {
      if (text.trim() !== '') {
        if (event.type === 'turn-end') held = text.trim();
        else if (!(finalAnswer && text.trim() === event.result.text.trim())) {
          stream.write(says(text.trim()));
        }
      }
      text = '';
    }
    const line = progressLine(name, event, style);
    if (line !== null) stream.write(`${line}\n`);
  }
  if (held !== null) stream.write(says(held));
}

/** Nesting of a tool input shown before it is cut (the line is cut far sooner anyway). */
const MAX_INPUT_DEPTH = 16;

/** On one line, at most {@link MAX_SHOWN} characters, then made safe for a terminal. */
function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  if (flat.length <= MAX_SHOWN) return terminalSafe(flat);
  const end = /[\ud800-\udbff]/.test(flat.charAt(MAX_SHOWN - 1)) ? MAX_SHOWN - 1 : MAX_SHOWN;
  return `${terminalSafe(flat.slice(0, end))}…`;
}
