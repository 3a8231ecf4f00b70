import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * Scripted stand-ins for two real wire protocols, on 127.0.0.1, started and stopped by a test:
 * OpenAI Chat Completions (as `@ai-sdk/openai-compatible` speaks it) and Anthropic Messages (as
 * `@ai-sdk/anthropic` speaks it with a custom base URL). Each answers a script of turns over
 * SSE, and refuses any request that breaks its provider's pairing rules with the provider's own
 * 400 and error text, so a regression in the loop's
 * ordering fails loudly and recognisably.
 */

/**
 * One scripted answer: a turn, or an HTTP failure.
 *
 * @example
 * const script: WireStep[] = [
 *   { calls: [{ id: 'call_1', name: 'echo', input: { text: 'hi' } }] },
 *   { status: 500, message: 'upstream failed' },
 *   { text: 'Done.' },
 * ];
 */
export type WireStep =
  | {
      text?: string;
      thinking?: { text: string; signature: string };
      calls?: { id: string; name: string; input: unknown }[];
    }
  | { status: number; message?: string };

/**
 * A running scripted server.
 *
 * @example
 * const server = await startChatServer([{ text: 'Hi.' }]);
 * // … run against server.url, then:
 * console.log(server.requests.length, server.rejections, server.remaining());
 * await server.close();
 */
export interface ScriptedServer {
  url: string;
  /** Every request body received, parsed. */
  requests: Record<string, unknown>[];
  /** Every 400 this server sent for a pairing violation: its error message. */
  rejections: string[];
  remaining(): number;
  close(): Promise<void>;
}

/**
 * Serve `handle` on 127.0.0.1: every request's body parsed as JSON and recorded in `requests`
 * (a body that is not JSON answered 400). With `route` (a path; a query is ignored), anything but a POST to it is a 404.
 *
 * @example
 * const requests: Record<string, unknown>[] = [];
 * const server = await startScriptedServer((_body, response) => sendJson(response, 200, {}), requests, [], []);
 */
export async function startScriptedServer(
  handle: (body: Record<string, unknown>, response: ServerResponse) => void,
  requests: Record<string, unknown>[],
  rejections: string[],
  steps: readonly unknown[],
  route?: string,
): Promise<ScriptedServer> {
  const server: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // The route is a path: a query (Claude Code asks `/v1/messages?beta=true`) does not count.
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      if (route !== undefined && (request.method !== 'POST' || path !== route)) {
        sendJson(response, 404, {
          error: { message: `no route ${request.method} ${request.url}`, type: 'not_found' },
        });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"bad json"}}');
        return;
      }
      requests.push(body);
      handle(body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    rejections,
    remaining: () => steps.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Answer with a JSON body.
 *
 * @example
 * sendJson(response, 404, { error: { message: 'no such route' } });
 */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function sendEvents(response: ServerResponse, events: { event?: string; data: unknown }[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) {
    if (event !== undefined) response.write(`event: ${event}\n`);
    response.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  response.end();
}

// ─── OpenAI Chat Completions ────────────────────────────────────────────────────────────────

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string }[];
  tool_call_id?: string;
}

/**
 * The first pairing violation of a Chat Completions request, in OpenAI's own words, or null:
 * an assistant message with `tool_calls` must be followed by one tool message per call id
 * before anything else; a tool message must answer a call of the assistant message before its
 * run of tool messages.
 *
 * @example
 * chatPairingError([{ role: 'tool', tool_call_id: 'call_1', content: 'x' }]); // OpenAI's 400 text
 */
export function chatPairingError(messages: readonly ChatMessage[]): string | null {
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index] as ChatMessage;
    if (message.role === 'tool') {
      let owner = index - 1;
      while (owner >= 0 && messages[owner]?.role === 'tool') owner -= 1;
      const calls = messages[owner]?.tool_calls?.map((call) => call.id) ?? [];
      if (messages[owner]?.role !== 'assistant' || !calls.includes(message.tool_call_id ?? '')) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
    }
    if (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0) {
      const answered = new Set<string>();
      for (let next = index + 1; messages[next]?.role === 'tool'; next += 1) {
        answered.add(messages[next]?.tool_call_id ?? '');
      }
      const missing = (message.tool_calls ?? [])
        .map((call) => call.id)
        .filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
      }
    }
  }
  return null;
}

/**
 * A scripted OpenAI-compatible `/v1/chat/completions` server. With `aside`, a request it gives a
 * step for is answered with that step, outside the script (a client's side requests, such as a
 * title for the session, that come in no fixed order with the turns).
 *
 * @example
 * import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
 * import { startChatServer } from 'llm-agent-revival/testing';
 * const server = await startChatServer([{ text: 'Hi.' }]);
 * const model = createOpenAICompatible({ name: 'chat', baseURL: server.url })('gpt-test');
 */
export function startChatServer(
  script: WireStep[],
  options: { aside?: (body: Record<string, unknown>) => WireStep | null } = {},
): Promise<ScriptedServer> {
  const steps = [...script];
  const requests: Record<string, unknown>[] = [];
  const rejections: string[] = [];
  return startScriptedServer(
    chatHandler(steps, rejections, options.aside),
    requests,
    rejections,
    steps,
  );
}

/**
 * How an outage server fails every request while it is down.
 *
 * @example
 * const rateLimited: Outage = { status: 429, headers: { 'retry-after': '2' } };
 */
export interface Outage {
  status: number;
  message?: string;
  headers?: Record<string, string>;
}

/**
 * A scripted chat server that can be taken down and brought back while a test runs.
 *
 * @example
 * const server = await startOutageChatServer([{ text: 'Back.' }], { status: 503 });
 * // … the run fails while the provider is down; then:
 * server.outage = null;
 */
export interface OutageServer extends ScriptedServer {
  /** While set, every request is answered with this failure (and counted in `failures`). */
  outage: Outage | null;
  /** Requests answered with an outage's failure. */
  failures: number;
}

/**
 * A scripted OpenAI-compatible chat server that answers every request with `outage` (500,
 * 429 with `retry-after` …) until a test sets it to null: then it follows its script, refusing
 * pairing violations as {@link startChatServer} does.
 *
 * @example
 * const server = await startOutageChatServer([{ text: 'Back.' }], { status: 500 });
 * console.log(server.failures); // requests refused so far
 */
export async function startOutageChatServer(
  script: WireStep[],
  outage: Outage | null,
): Promise<OutageServer> {
  const steps = [...script];
  const requests: Record<string, unknown>[] = [];
  const rejections: string[] = [];
  const answer = chatHandler(steps, rejections);
  const state = { outage, failures: 0 };
  const server = await startScriptedServer(
    (body, response) => {
      const down = state.outage;
      if (down === null) {
        answer(body, response);
        return;
      }
      state.failures += 1;
      response.writeHead(down.status, { 'content-type': 'application/json', ...down.headers });
      response.end(
        JSON.stringify({
          error: { message: down.message ?? `scripted ${down.status}`, type: 'server_error' },
        }),
      );
    },
    requests,
    rejections,
    steps,
  );
  return Object.defineProperties(server as OutageServer, {
    outage: {
      get: () => state.outage,
      set: (value: Outage | null) => {
        state.outage = value;
      },
    },
    failures: { get: () => state.failures },
  });
}

function chatHandler(
  steps: WireStep[],
  rejections: string[],
  aside?: (body: Record<string, unknown>) => WireStep | null,
): (body: Record<string, unknown>, response: ServerResponse) => void {
  return (body, response) => {
    const problem = chatPairingError((body.messages ?? []) as ChatMessage[]);
    if (problem !== null) {
      rejections.push(problem);
      sendJson(response, 400, {
        error: { message: problem, type: 'invalid_request_error', param: 'messages', code: null },
      });
      return;
    }
    const step = aside?.(body) ?? steps.shift();
    if (step === undefined) {
      sendJson(response, 500, { error: { message: 'script exhausted', type: 'server_error' } });
      return;
    }
    if ('status' in step) {
      sendJson(response, step.status, {
        error: { message: step.message ?? `scripted ${step.status}`, type: 'server_error' },
      });
      return;
    }
    const chunk = (delta: unknown, finish: string | null) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'scripted',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const events: { data: unknown }[] = [{ data: chunk({ role: 'assistant', content: '' }, null) }];
    if (step.text !== undefined) events.push({ data: chunk({ content: step.text }, null) });
    (step.calls ?? []).forEach((call, index) => {
      events.push({
        data: chunk(
          {
            tool_calls: [
              {
                index,
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.input) },
              },
            ],
          },
          null,
        ),
      });
    });
    events.push({ data: chunk({}, (step.calls ?? []).length > 0 ? 'tool_calls' : 'stop') });
    events.push({
      data: {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'scripted',
        choices: [],
        usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
      },
    });
    events.push({ data: '[DONE]' });
    sendEvents(response, events);
  };
}

// ─── Anthropic Messages ─────────────────────────────────────────────────────────────────────

interface AnthropicBlock {
  type: string;
  id?: string;
  tool_use_id?: string;
  thinking?: string;
  signature?: string;
}
interface AnthropicMessage {
  role: string;
  content: string | AnthropicBlock[];
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The first pairing violation of a Messages request, in Anthropic's own words, or null: the
 * tool_use ids of assistant message N are answered by tool_result blocks at the start of
 * message N+1; a tool_result must answer a tool_use of the message before; thinking blocks the
 * server sent come back unmodified (our wording for that one).
 *
 * @example
 * anthropicPairingError([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] }], new Map());
 */
export function anthropicPairingError(
  messages: readonly AnthropicMessage[],
  thinkingSent: ReadonlyMap<string, string>,
): string | null {
  const blocksOf = (message: AnthropicMessage | undefined): AnthropicBlock[] =>
    message === undefined || typeof message.content === 'string' ? [] : message.content;
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index] as AnthropicMessage;
    const blocks = blocksOf(message);
    if (message.role === 'assistant') {
      for (const block of blocks) {
        if (block.type === 'tool_use' && !TOOL_ID.test(block.id ?? '')) {
          return `messages.${index}.content.${blocks.indexOf(block)}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
        }
        if (
          block.type === 'thinking' &&
          thinkingSent.get(block.signature ?? '') !== block.thinking
        ) {
          return `messages.${index}: thinking block altered or unsigned (signature ${block.signature ?? 'none'})`;
        }
      }
      const uses = blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id ?? ''] : []));
      if (uses.length === 0) continue;
      const next = blocksOf(messages[index + 1]);
      const leading: string[] = [];
      for (const block of next) {
        if (block.type !== 'tool_result') break;
        leading.push(block.tool_use_id ?? '');
      }
      const missing = uses.filter((id) => !leading.includes(id));
      if (missing.length > 0 && leading.length === 0 && next.length > 0) {
        return `messages.${index + 1}: Did not find ${uses.length} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`;
      }
      if (missing.length > 0) {
        return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    if (message.role === 'user') {
      const previous = blocksOf(messages[index - 1]);
      const uses = new Set(
        previous.flatMap((block) => (block.type === 'tool_use' ? [block.id ?? ''] : [])),
      );
      for (const [position, block] of blocks.entries()) {
        if (block.type === 'tool_result' && !uses.has(block.tool_use_id ?? '')) {
          return `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
  }
  return null;
}

/**
 * A scripted Anthropic `/v1/messages` server.
 *
 * @example
 * import { createAnthropic } from '@ai-sdk/anthropic';
 * import { startAnthropicServer } from 'llm-agent-revival/testing';
 * const server = await startAnthropicServer([{ text: 'Hi.' }]);
 * const model = createAnthropic({ baseURL: server.url, apiKey: 'test' })('claude-test');
 */
export function startAnthropicServer(script: WireStep[]): Promise<ScriptedServer> {
  const steps = [...script];
  const requests: Record<string, unknown>[] = [];
  const rejections: string[] = [];
  const thinkingSent = new Map<string, string>();
  return startScriptedServer(
    (body, response) => {
      const problem = anthropicPairingError(
        (body.messages ?? []) as AnthropicMessage[],
        thinkingSent,
      );
      if (problem !== null) {
        rejections.push(problem);
        sendJson(response, 400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: problem },
        });
        return;
      }
      const step = steps.shift();
      if (step === undefined || 'status' in step) {
        const status = step === undefined ? 500 : step.status;
        sendJson(response, status, {
          type: 'error',
          error: {
            type: 'api_error',
            message:
              step === undefined ? 'script exhausted' : (step.message ?? `scripted ${status}`),
          },
        });
        return;
      }
      const events: { event: string; data: unknown }[] = [
        {
          event: 'message_start',
          data: {
            type: 'message_start',
            message: {
              id: 'msg_1',
              type: 'message',
              role: 'assistant',
              model: 'scripted',
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 12, output_tokens: 1 },
            },
          },
        },
      ];
      let index = 0;
      const block = (start: unknown, deltas: unknown[]) => {
        events.push({
          event: 'content_block_start',
          data: { type: 'content_block_start', index, content_block: start },
        });
        for (const delta of deltas) {
          events.push({
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index, delta },
          });
        }
        events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
        index += 1;
      };
      if (step.thinking !== undefined) {
        thinkingSent.set(step.thinking.signature, step.thinking.text);
        block({ type: 'thinking', thinking: '', signature: '' }, [
          { type: 'thinking_delta', thinking: step.thinking.text },
          { type: 'signature_delta', signature: step.thinking.signature },
        ]);
      }
      if (step.text !== undefined) {
        block({ type: 'text', text: '' }, [{ type: 'text_delta', text: step.text }]);
      }
      for (const call of step.calls ?? []) {
        block({ type: 'tool_use', id: call.id, name: call.name, input: {} }, [
          { type: 'input_json_delta', partial_json: JSON.stringify(call.input) },
        ]);
      }
      const calls = (step.calls ?? []).length > 0;
      events.push({
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: calls ? 'tool_use' : 'end_turn', stop_sequence: null },
          usage: { output_tokens: 3 },
        },
      });
      events.push({ event: 'message_stop', data: { type: 'message_stop' } });
      sendEvents(response, events);
    },
    requests,
    rejections,
    steps,
  );
}
