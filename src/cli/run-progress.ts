/**
 * Progress of running runs, one line per event worth a person's attention, on stderr.
 *
 * @module
 */
import type { LoopEvent, RunHandle } from '../loop/types.ts';
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
  const who = style.dim(`[${name}]`);
  switch (event.type) {
    case 'tool-call-start':
      return `${who} ${style.cyan('→')} ${event.toolName} ${style.dim(shorten(JSON.stringify(event.input)))}`;
    case 'tool-call-end':
      return `${who} ${event.isError ? style.red('← error from') : style.green('←')} ${event.toolName}`;
    case 'join-wait-start':
      return `${who} waiting for ${event.agentIds.join(', ')} (the pending task_wait)`;
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
      return `${who} ${style.red(result.status)}: ${result.error ?? result.stopReason}`;
    }
    default:
      return null;
  }
}

/**
 * Follow a run's events and write their progress lines to `stream`; the model's text is shown
 * once per turn. Resolves when the run ends.
 *
 * @example
 * await followRun('lead', run, process.stderr, style);
 */
export async function followRun(
  name: string,
  run: RunHandle,
  stream: NodeJS.WritableStream,
  style: Style,
): Promise<void> {
  let text = '';
  for await (const event of run) {
    if (event.type === 'text-delta') {
      text += event.text;
      continue;
    }
    if (event.type === 'turn-end' || event.type === 'run-end') {
      if (text.trim() !== '')
        stream.write(`${style.dim(`[${name}]`)} says: ${shorten(text.trim())}\n`);
      text = '';
    }
    const line = progressLine(name, event, style);
    if (line !== null) stream.write(`${line}\n`);
  }
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= MAX_SHOWN ? flat : `${flat.slice(0, MAX_SHOWN)}…`;
}
