import type { Message, ToolResultPart } from './records.ts';

/** The first answer found for one call, and the tool message it was written in. */
interface Answer<T> {
  part: ToolResultPart;
  source: T;
  sourceIndex: number;
}

/**
 * Put every tool result where the providers want it (docs/loop.md, "The conversation view"): directly after the assistant
 * turn that asked for it, in that turn's call order, all results of one turn together in ONE
 * tool message; any other message written meanwhile (a user turn, a background delivery, a
 * revival's resume notice) moves after them.
 *
 * - A result belongs to the nearest assistant turn before it that asked for its call id (some
 *   OpenAI-compatible servers reuse ids such as `call_0` from turn to turn). A result written
 *   after a later turn still moves back to its call: dropping it would leave that call
 *   unanswered forever and every later request would be refused.
 * - A result whose call is not in the view (compacted away, or never asked) is dropped.
 * - A call answered twice keeps the first answer, in file order.
 * - The merged tool message is the first contributing tool message (in file order) with the
 *   turn's results as content, so it keeps that message's `extras` and, in a view, its `seq`.
 * - It does not invent answers: a call with no result stays unanswered. That is a run's pending
 *   state, for the loop to finish (or revival to answer); `pairingViolations` reports it.
 * - Assistant, user and system messages are returned as they are (the same objects).
 *
 * An already normalized view (each turn's results in one tool message right after it, in call
 * order) comes back deep-equal, and normalizing twice is the same as normalizing once. A view
 * that breaks no provider's rule can still change: results split over several tool messages
 * are merged, and put in call order. Pure; never throws (proven by the fuzz properties in
 * test/transcript/normalize.property.test.ts).
 *
 * @example
 * const call = (callId: string): ToolCallPart => ({ type: 'tool-call', callId, toolName: 'f', input: {} });
 * const result = (callId: string): ToolResultPart =>
 *   ({ type: 'tool-result', callId, toolName: 'f', output: 'ok', isError: false });
 * normalizeConversation([
 *   { role: 'assistant', content: [call('a'), call('b')] },
 *   { role: 'tool', content: [result('b')] },
 *   { role: 'user', content: [{ type: 'text', text: 'also…' }] },
 *   { role: 'tool', content: [result('a')] },
 * ]);
 * // → assistant [a, b], tool [result a, result b], user 'also…'
 */
export function normalizeConversation<T extends Message>(messages: readonly T[]): T[] {
  const answersByTurn = collectAnswers(messages);
  const normalized: T[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'tool') return;
    normalized.push(message);
    if (message.role !== 'assistant') return;
    const answers = answersByTurn.get(index);
    if (answers === undefined || answers.size === 0) return;
    const parts: ToolResultPart[] = [];
    let first: Answer<T> | undefined;
    for (const callId of callIdsOf(message)) {
      const answer = answers.get(callId);
      if (answer === undefined) continue;
      parts.push(answer.part);
      if (first === undefined || answer.sourceIndex < first.sourceIndex) first = answer;
    }
    if (first !== undefined) normalized.push({ ...first.source, content: parts });
  });
  return normalized;
}

/** For each assistant turn (by index), the first answer to each of its calls. */
function collectAnswers<T extends Message>(
  messages: readonly T[],
): Map<number, Map<string, Answer<T>>> {
  const askingTurn = new Map<string, number>();
  const answersByTurn = new Map<number, Map<string, Answer<T>>>();
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      for (const callId of callIdsOf(message)) askingTurn.set(callId, index);
      return;
    }
    if (message.role !== 'tool') return;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const turn = askingTurn.get(part.callId);
      if (turn === undefined) continue;
      let answers = answersByTurn.get(turn);
      if (answers === undefined) {
        answers = new Map();
        answersByTurn.set(turn, answers);
      }
      if (!answers.has(part.callId)) {
        answers.set(part.callId, { part, source: message, sourceIndex: index });
      }
    }
  });
  return answersByTurn;
}

/** The call ids of an assistant turn, in order, each once. */
function callIdsOf(message: Message): string[] {
  const ids: string[] = [];
  for (const part of message.content) {
    if (part.type === 'tool-call' && !ids.includes(part.callId)) ids.push(part.callId);
  }
  return ids;
}
