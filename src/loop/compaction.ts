import type { Message } from '../transcript/records.ts';
import type { LoopMessage } from './types.ts';

/**
 * How many recent messages a compaction leaves alone unless told otherwise: enough that the
 * model still sees, verbatim, the last exchange or two it is working from.
 *
 * @example
 * const keepRecent = options.keepRecent ?? DEFAULT_KEEP_RECENT;
 */
export const DEFAULT_KEEP_RECENT = 6;

/**
 * What opens every compaction summary, so that the model knows what it is reading.
 *
 * @example
 * const isSummary = (text: string) => text.startsWith(COMPACTION_PREFIX);
 */
export const COMPACTION_PREFIX =
  '[compaction summary] Older turns of this conversation were replaced by this summary:';

/**
 * A rough token count of a conversation: characters of its JSON over four. It only has to be
 * good enough to decide when to compact, and it costs no tokenizer.
 *
 * @example
 * estimateTokens([{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }]); // 12
 */
export function estimateTokens(messages: readonly Message[], system = ''): number {
  let characters = system.length;
  for (const message of messages) characters += JSON.stringify(message.content).length;
  return Math.ceil(characters / 4);
}

/**
 * The prefix of a conversation a compaction would replace, and the seq range it names. Indexes
 * and seqs both, because the run replaces messages in memory while the `compaction` record names
 * them by seq, which is what `conversationView` reads back.
 *
 * @example
 * const plan: CompactionPlan = { start: 0, count: 12, fromSeq: 1, toSeq: 24 };
 * const summary = `${COMPACTION_PREFIX} the user asked for a report; two sources were read.`;
 * await session.append({ type: 'compaction', fromSeq: plan.fromSeq, toSeq: plan.toSeq, summary });
 */
export interface CompactionPlan {
  /** Messages `[start, start + count)` of the conversation are replaced (`start` skips leading system turns). */
  start: number;
  count: number;
  fromSeq: number;
  toSeq: number;
}

/**
 * Decide what to compact, or null. Only ever a prefix of the conversation, ending where a new
 * turn begins (never between a call and its results), leaving at least `keepRecent` messages
 * and the current turn alone, made only of messages read from the transcript (with a `seq`),
 * whose seqs all lie below those of the messages kept (so that the record's range hides
 * exactly the prefix). Leading system messages are kept. Pure.
 *
 * @example
 * const plan = planCompaction(messages, { maxTokens: 8000 });
 * if (plan !== null) console.log('to summarise:', messages.slice(plan.start, plan.start + plan.count));
 */
export function planCompaction(
  conversation: readonly LoopMessage[],
  options: { maxTokens: number; keepRecent?: number },
  system = '',
): CompactionPlan | null {
  if (estimateTokens(conversation, system) <= options.maxTokens) return null;
  let start = 0;
  while (conversation[start]?.role === 'system') start += 1;
  const keepRecent = Math.max(options.keepRecent ?? DEFAULT_KEEP_RECENT, 1);
  const lastAssistant = conversation.findLastIndex((message) => message.role === 'assistant');
  // The current turn is the last assistant turn and what answers it; keep the user turn that
  // prompted it too when it is right before, so the model still sees what it is doing.
  const limit = Math.min(
    conversation.length - keepRecent,
    lastAssistant === -1 ? 0 : lastAssistant,
  );
  if (limit <= start) return null;
  for (let cut = limit; cut > start; cut -= 1) {
    if (isCleanCut(conversation, start, cut)) {
      const replaced = conversation.slice(start, cut);
      const seqs = replaced.map((message) => message.seq as number);
      return {
        start,
        count: cut - start,
        fromSeq: Math.min(...seqs),
        toSeq: Math.max(...seqs),
      };
    }
  }
  return null;
}

function isCleanCut(conversation: readonly LoopMessage[], start: number, cut: number): boolean {
  const next = conversation[cut];
  if (next === undefined || next.role === 'tool') return false;
  let highest = -1;
  for (let index = start; index < cut; index += 1) {
    const seq = conversation[index]?.seq;
    if (seq === undefined) return false;
    highest = Math.max(highest, seq);
  }
  for (let index = cut; index < conversation.length; index += 1) {
    const seq = conversation[index]?.seq;
    if (seq !== undefined && seq <= highest) return false;
  }
  return true;
}

/**
 * The messages to summarise as plain text for the summariser: a single user turn every
 * provider accepts, whatever tools the conversation used.
 *
 * @example
 * renderForSummary(messages); // 'user: …\nassistant: …\nassistant called read_file {…}\n…'
 */
export function renderForSummary(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
          lines.push(`${message.role}: ${part.text}`);
          break;
        case 'tool-call':
          lines.push(`assistant called ${part.toolName} ${JSON.stringify(part.input)}`);
          break;
        case 'tool-result':
          lines.push(
            `${part.toolName} ${part.isError ? 'failed' : 'returned'}: ${
              typeof part.output === 'string' ? part.output : JSON.stringify(part.output)
            }`,
          );
          break;
        default:
          break;
      }
    }
  }
  return lines.join('\n');
}

/**
 * The instruction given to the model that writes a summary. It asks for what the agent needs to
 * carry on, because the summary is all of those turns the model will ever see again.
 *
 * @example
 * const summary = await callModel({ ...request, system: SUMMARY_INSTRUCTIONS, tools: {} });
 */
export const SUMMARY_INSTRUCTIONS =
  'You compact the history of an agent run. Summarise the conversation you are given so that ' +
  'the agent can carry on from the summary alone: the task, decisions made, facts learned, ' +
  'files and tools touched and their outcomes, failures, and what remains to be done. Be ' +
  'concrete and brief. Answer with the summary only.';
