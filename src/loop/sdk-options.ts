import type { Message } from '../transcript/records.ts';

/**
 * Options of the AI SDK's `streamText` / `ToolLoopAgent` the Loop does not take, and what to
 * use instead. An option passed to a JavaScript constructor that does not know it would be
 * silently ignored; the Loop refuses each of these by name, and its own old names too.
 */
const INSTEAD: Readonly<Record<string, string>> = {
  stopWhen: 'the Loop stops when the model answers without calls; cap it with maxTurns',
  prepareStep: 'prepareCall returns settings for each model call',
  onStepFinish: "iterate the run's events (turn-end, tool-call-end) or read the transcript",
  onStepStart: "iterate the run's events (turn-start)",
  onFinish: 'await the run for its result',
  onEnd: 'await the run for its result',
  onChunk: "iterate the run's events (text-delta)",
  onError: 'a failed run resolves with status failed and its error',
  output:
    'structured output is not supported: ask for JSON in the system prompt and parse the text',
  experimental_output:
    'structured output is not supported: ask for JSON in the system prompt and parse the text',
  experimental_repairToolCall: 'repairToolCall',
  maxSteps: 'maxTurns',
  model: 'backends: [model]',
  instructions: 'system',
  prompt: 'loop.start(prompt)',
  messages: 'loop.run(messages)',
  abortSignal: 'signal',
  maxRetries: 'backendRounds',
  experimental_context: 'close over what the tools need',
  context: 'close over what the tools need',
  temperature: 'callSettings: { temperature }',
  maxOutputTokens: 'callSettings: { maxOutputTokens }',
  providerOptions: 'callSettings: { providerOptions }',
  headers: 'callSettings: { headers }',
  // Our own old name (before 0.4): it took any writer, not only a file Session, so it was renamed.
  session:
    'the transcript writer is given as writer now (any TranscriptWriter: a file Session or a store writer)',
};

/**
 * Throw a TypeError for an AI SDK option the Loop does not take (or an old name of its own),
 * naming what to use instead.
 *
 * @example
 * refuseUnsupported({ backends, writer: session }); // returns
 * // refuseUnsupported({ backends, writer: session, stopWhen }) throws: "Loop: stopWhen is not supported: …"
 */
export function refuseUnsupported(options: object): void {
  for (const [name, instead] of Object.entries(INSTEAD)) {
    if ((options as Record<string, unknown>)[name] !== undefined) {
      throw new TypeError(`Loop: ${name} is not supported: ${instead}`);
    }
  }
}

const STORABLE = new Set(['text', 'reasoning', 'tool-call', 'tool-result']);

/**
 * Throw a TypeError for a message a transcript cannot store — an image or file part, content
 * given as a string — before anything is written: format v1 holds text, reasoning, tool calls
 * and their results.
 *
 * @example
 * refuseUnstorableParts([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], 'Loop.start');
 */
export function refuseUnstorableParts(messages: readonly Message[], where: string): void {
  for (const message of messages) {
    if (!Array.isArray(message?.content)) {
      throw new TypeError(`${where}: a message's content must be an array of parts`);
    }
    for (const part of message.content) {
      const type = (part as { type?: unknown })?.type;
      if (typeof type === 'string' && STORABLE.has(type)) continue;
      throw new TypeError(
        `${where}: ${/^[aeiou]/.test(String(type)) ? 'an' : 'a'} ${String(type)} part cannot be stored in a transcript (it holds text, reasoning, tool calls and their results): put the file's text, or a path or URL to it, in a text part`,
      );
    }
  }
}
