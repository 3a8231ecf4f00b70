import type {
  ForeignRecord,
  Message,
  MessageExtras,
  RecordBody,
  ToolCallPart,
  ToolResultPart,
  TranscriptRecord,
} from '../../src/transcript/records.ts';

/*
 * Small builders for conversations and transcripts in the conversation-view tests, so a test
 * reads like the conversation it is about.
 */

export function call(callId: string, toolName = 'lookup'): ToolCallPart {
  return { type: 'tool-call', callId, toolName, input: { query: callId } };
}

export function result(callId: string, output = `answer to ${callId}`): ToolResultPart {
  return { type: 'tool-result', callId, toolName: 'lookup', output, isError: false };
}

export function assistant(...parts: (string | ToolCallPart)[]): Message {
  return {
    role: 'assistant',
    content: parts.map((part) => (typeof part === 'string' ? { type: 'text', text: part } : part)),
  };
}

export function tool(...results: ToolResultPart[]): Message {
  return { role: 'tool', content: results };
}

export function user(text: string, extras?: MessageExtras): Message {
  const message: Message = { role: 'user', content: [{ type: 'text', text }] };
  if (extras !== undefined) message.extras = extras;
  return message;
}

export function system(text: string): Message {
  return { role: 'system', content: [{ type: 'text', text }] };
}

/** Records with seq 0, 1, 2, … as a session would write them. */
export function records(...bodies: (RecordBody | Message)[]): (TranscriptRecord | ForeignRecord)[] {
  return bodies.map((body, seq) => {
    const full = 'type' in body ? body : { type: 'message' as const, ...body };
    return { v: 1, seq, at: '2026-12-02T08:00:00.000Z', ...full } as TranscriptRecord;
  });
}

/** Envelopes that are not part of the conversation. */
export function dispatched(callId: string): RecordBody {
  return {
    type: 'tool-dispatched',
    callId,
    toolName: 'lookup',
    inputDigest: 'sha256:00',
    idempotency: 'read-only',
  };
}

export function settled(callId: string): RecordBody {
  return { type: 'tool-settled', callId, status: 'completed' };
}

export function compaction(fromSeq: number, toSeq: number, summary: string): RecordBody {
  return { type: 'compaction', fromSeq, toSeq, summary };
}

/** Drop the `seq` of view messages, to compare with plain messages. */
export function withoutSeq(messages: readonly (Message & { seq: number })[]): Message[] {
  return messages.map(({ seq: _seq, ...message }) => message);
}
