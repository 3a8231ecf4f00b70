import type { AgentInputItem, AgentOutputItem } from '@openai/agents';
import type { ContentPart, JsonValue, Message } from '../../transcript/records.ts';

/**
 * Our conversation as OpenAI Agents items: user and system turns as messages, an assistant
 * turn as its message and function calls, each result as a `function_call_result`. Reasoning is
 * kept in the transcript but not handed back (the Responses API replays it by item id, which a
 * transcript does not keep).
 *
 * @example
 * const items = itemsOf([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
 * // [{ type: 'message', role: 'user', content: 'Hi' }]
 */
export function itemsOf(messages: readonly Message[]): AgentInputItem[] {
  const items: AgentInputItem[] = [];
  for (const message of messages) {
    const text = message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('');
    if (message.role === 'user' || message.role === 'system') {
      items.push({ type: 'message', role: message.role, content: text } as AgentInputItem);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text' && part.text !== '') {
        items.push({
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: part.text }],
        } as AgentInputItem);
      } else if (part.type === 'tool-call') {
        items.push({
          type: 'function_call',
          callId: part.callId,
          name: part.toolName,
          arguments: JSON.stringify(part.input),
          status: 'completed',
        } as AgentInputItem);
      } else if (part.type === 'tool-result') {
        items.push({
          type: 'function_call_result',
          callId: part.callId,
          name: part.toolName,
          status: 'completed',
          output: {
            type: 'text',
            text: typeof part.output === 'string' ? part.output : JSON.stringify(part.output),
          },
        } as AgentInputItem);
      }
    }
  }
  return items;
}

/**
 * A model response's output items as one assistant turn. An item a transcript cannot hold (a
 * hosted tool call, a computer or shell call…) is refused with a TypeError naming it.
 *
 * @example
 * const turn = assistantTurnOf([{ type: 'function_call', callId: 'c1', name: 'send', arguments: '{"to":"ann"}', status: 'completed' }]);
 */
export function assistantTurnOf(output: readonly AgentOutputItem[]): Message {
  const content: ContentPart[] = [];
  for (const item of output) {
    const type = (item as { type?: string }).type ?? 'message';
    if (type === 'message') {
      const message = item as { role?: string; content: unknown };
      for (const part of Array.isArray(message.content) ? message.content : []) {
        const entry = part as { type: string; text?: string; refusal?: string };
        if (entry.type === 'output_text') content.push({ type: 'text', text: entry.text ?? '' });
        else if (entry.type === 'refusal')
          content.push({ type: 'text', text: entry.refusal ?? '' });
      }
    } else if (type === 'function_call') {
      const call = item as { callId: string; name: string; arguments: string };
      content.push({
        type: 'tool-call',
        callId: call.callId,
        toolName: call.name,
        input: parseArguments(call.arguments),
      });
    } else if (type === 'reasoning') {
      const reasoning = item as { content?: { text?: string }[] };
      const text = (reasoning.content ?? []).map((part) => part.text ?? '').join('');
      if (text !== '') content.push({ type: 'reasoning', text });
    } else {
      throw new TypeError(
        `revivableAgentsModel: the model answered with a ${type} item, which a transcript cannot hold (it holds messages, function calls and their results)`,
      );
    }
  }
  return {
    role: 'assistant',
    content: content.length > 0 ? content : [{ type: 'text', text: '' }],
  };
}

/**
 * What the runner added that is ours to record: user turns, and results of calls the runner
 * answered itself (no tool of ours ran). Output items (messages, calls, reasoning) are the
 * model wrapper's: one not in the transcript means the model was not wrapped.
 *
 * @example
 * const kind = kindOf({ type: 'message', role: 'user', content: 'Hi' }); // 'user'
 */
export function kindOf(item: AgentInputItem): 'user' | 'system' | 'result' | 'output' | 'other' {
  const type = (item as { type?: string }).type ?? 'message';
  const role = (item as { role?: string }).role;
  if (type === 'message' && role === 'user') return 'user';
  if (type === 'message' && role === 'system') return 'system';
  if (type === 'function_call_result') return 'result';
  if (type === 'message' || type === 'function_call' || type === 'reasoning') return 'output';
  return 'other';
}

/**
 * A user or system item's text; an image or file part is refused (a transcript holds text).
 *
 * @example
 * textOfInput({ type: 'message', role: 'user', content: 'Hi' }); // 'Hi'
 */
export function textOfInput(item: AgentInputItem): string {
  const content = (item as { content: unknown }).content;
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const part of Array.isArray(content) ? content : []) {
    const entry = part as { type: string; text?: string };
    if (entry.type !== 'input_text' && entry.type !== 'output_text') {
      throw new TypeError(
        `TranscriptSession: a ${entry.type} part cannot be stored in a transcript (it holds text): put the file's text, or a path or URL to it, in the message`,
      );
    }
    parts.push(entry.text ?? '');
  }
  return parts.join('');
}

/**
 * What a `function_call_result` item says, as the model reads it.
 *
 * @example
 * resultText({ type: 'function_call_result', callId: 'c1', name: 'send', status: 'completed', output: { type: 'text', text: 'ok' } }); // 'ok'
 */
export function resultText(item: AgentInputItem): string {
  const output = (item as { output: unknown }).output;
  if (typeof output === 'string') return output;
  const single = output as { type?: string; text?: string };
  if (single?.type === 'text') return single.text ?? '';
  if (Array.isArray(output)) {
    return output
      .map((part) =>
        (part as { type?: string }).type === 'input_text'
          ? ((part as { text?: string }).text ?? '')
          : JSON.stringify(part),
      )
      .join('');
  }
  return JSON.stringify(output);
}

function parseArguments(text: string): JsonValue {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}
