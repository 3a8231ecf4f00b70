import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type ScriptedServer, sendJson, startScriptedServer } from './provider-servers.ts';

/*
 * A scripted stand-in for the OpenAI Responses API (`POST /v1/responses`), which is what
 * `openai('gpt-5')` of @ai-sdk/openai speaks by default, on 127.0.0.1. It answers a script of
 * turns with the SSE events the provider parses (response.created, output_item.added/done for
 * reasoning, message and function_call items, the text, reasoning-summary and arguments deltas,
 * response.completed with usage), and it keeps what OpenAI keeps: every item of a completed
 * response made with `store` not false, so that a later `item_reference` to it resolves, and
 * every encrypted reasoning blob it handed out (`include: ['reasoning.encrypted_content']`).
 *
 * It refuses a request the way OpenAI does, with its documented error texts:
 * - a `function_call` with no `function_call_output` of its `call_id`:
 *   400 "No tool output found for function call <call_id>."
 * - a `function_call_output` with no `function_call` before it:
 *   400 "No tool call found for function call output with call_id <call_id>."
 * - a reasoning item (by reference or inline) not followed by the item the model produced
 *   after it (a message or a function call):
 *   400 "Item '<rs_id>' of type 'reasoning' was provided without its required following item."
 * - a message or function call replayed with its item id, whose reasoning is not in the input:
 *   400 "Item '<id>' of type '<type>' was provided without its required 'reasoning' item: '<rs_id>'."
 *   (peers.md quotes the function_call form; the message form is the same sentence);
 * - an `item_reference` (or an inline reasoning item with no encrypted content) naming an item
 *   this server did not store: 404 "Item with id '<id>' not found.", with OpenAI's sentence
 *   about `store` after it when the request itself says `store: false` (vercel/ai#7543,
 *   vercel/ai#10290, can1357/oh-my-pi#41);
 * - inline reasoning whose encrypted content this server never issued, or issued for another
 *   id: 400 "The encrypted content for item <rs_id> could not be verified." (our wording,
 *   modelled on OpenAI's).
 * A scripted outage (`{ status }`) is answered before the body is looked at, as a real outage
 * would be; everything else is validated first.
 */

/**
 * One scripted answer of the Responses server: a turn, or an HTTP failure.
 *
 * @example
 * const steps: ResponsesStep[] = [
 *   { reasoning: { id: 'rs_1', summary: ['Thinking.'] }, calls: [{ id: 'call_1', name: 'echo', input: {} }] },
 *   { text: 'Done.' },
 * ];
 */
export type ResponsesStep =
  | {
      /** A reasoning item first, with this id and these summary parts (none: an empty summary). */
      reasoning?: { id: string; summary?: string[] };
      text?: string;
      calls?: { id: string; name: string; input: unknown }[];
      /**
       * End the stream with an `error` or `response.failed` event instead of
       * `response.completed`: right after `response.created` (before any output, which the
       * provider raises as an HTTP-like error) or after the first output item and text delta.
       */
      failure?: {
        event: 'error' | 'response.failed';
        after: 'created' | 'output';
        code: string;
        message: string;
      };
    }
  | { status: number; message?: string };

/**
 * What this server handed out: the item as the model produced it, and whether it was stored.
 *
 * @example
 * const server = await startResponsesServer([{ text: 'Hi.' }]);
 * const stored = [...server.items.values()].filter((item: IssuedItem) => item.stored);
 */
export interface IssuedItem {
  type: 'reasoning' | 'message' | 'function_call';
  stored: boolean;
  /** Which response of this server produced it, counting from 1 (outages and refusals not counted). */
  response: number;
  /** The reasoning item that came before it in the same response, if any. */
  reasoningId?: string;
  /** Set on a reasoning item when the request asked for `reasoning.encrypted_content`. */
  encryptedContent?: string;
  /** Set on a function call. */
  callId?: string;
}

/**
 * A running scripted Responses server.
 *
 * @example
 * const server = await startResponsesServer([{ text: 'Hi.' }]);
 * console.log(server.items.size);
 */
export interface ResponsesServer extends ScriptedServer {
  /** Every output item this server produced, by item id. */
  items: ReadonlyMap<string, IssuedItem>;
}

/**
 * A refusal: the status and the error message OpenAI would send.
 *
 * @example
 * const refusal: ResponsesRefusal = { status: 400, message: 'No tool call found for function call output with call_id call_9.' };
 */
export interface ResponsesRefusal {
  status: number;
  message: string;
}

type InputItem = Record<string, unknown>;

let serverCount = 0;

/**
 * The first reason OpenAI would refuse this `input`, or null. `items` are what the server
 * produced; `encrypted` maps each encrypted blob it issued to its reasoning item's id.
 *
 * @example
 * responsesInputError([{ type: 'function_call_output', call_id: 'call_9', output: 'x' }], new Map(), new Map(), undefined);
 * // { status: 400, message: 'No tool call found for function call output with call_id call_9.' }
 */
export function responsesInputError(
  input: readonly InputItem[],
  items: ReadonlyMap<string, IssuedItem>,
  encrypted: ReadonlyMap<string, string>,
  store: unknown,
): ResponsesRefusal | null {
  const notFound = (id: string): ResponsesRefusal => ({
    status: 404,
    message:
      store === false
        ? `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`
        : `Item with id '${id}' not found.`,
  });
  const stored = (id: unknown): IssuedItem | undefined => {
    const item = typeof id === 'string' ? items.get(id) : undefined;
    return item?.stored === true ? item : undefined;
  };
  // What each input item is, once references are resolved: a model output item (with the
  // item id it carries, if any), or anything else.
  const resolved: { kind: string; id?: string }[] = [];
  for (const item of input) {
    if (item.type === 'item_reference') {
      const found = stored(item.id);
      if (found === undefined) return notFound(String(item.id));
      resolved.push({ kind: found.type, id: String(item.id) });
    } else if (item.type === 'reasoning') {
      if (typeof item.encrypted_content === 'string') {
        const owner = encrypted.get(item.encrypted_content);
        if (owner === undefined || (item.id !== undefined && item.id !== owner)) {
          return {
            status: 400,
            message: `The encrypted content for item ${String(item.id ?? owner ?? 'reasoning')} could not be verified.`,
          };
        }
        resolved.push({ kind: 'reasoning', id: owner });
      } else {
        if (stored(item.id) === undefined) return notFound(String(item.id));
        resolved.push({ kind: 'reasoning', id: String(item.id) });
      }
    } else if (item.type === 'function_call') {
      resolved.push({
        kind: 'function_call',
        ...(typeof item.id === 'string' ? { id: item.id } : {}),
      });
    } else if (item.role === 'assistant' && (item.type === undefined || item.type === 'message')) {
      resolved.push({ kind: 'message', ...(typeof item.id === 'string' ? { id: item.id } : {}) });
    } else {
      resolved.push({ kind: String(item.type ?? item.role) });
    }
  }
  const reasoningSeen = new Set<string>();
  const calls: string[] = [];
  const answered = new Set<string>();
  for (const [index, entry] of resolved.entries()) {
    const item = input[index] as InputItem;
    if (entry.kind === 'reasoning') {
      const next = resolved[index + 1]?.kind;
      if (next !== 'message' && next !== 'function_call') {
        return {
          status: 400,
          message: `Item '${entry.id}' of type 'reasoning' was provided without its required following item.`,
        };
      }
      reasoningSeen.add(entry.id as string);
    }
    if ((entry.kind === 'message' || entry.kind === 'function_call') && entry.id !== undefined) {
      const needed = items.get(entry.id)?.reasoningId;
      if (needed !== undefined && !reasoningSeen.has(needed)) {
        return {
          status: 400,
          message: `Item '${entry.id}' of type '${entry.kind}' was provided without its required 'reasoning' item: '${needed}'.`,
        };
      }
    }
    if (entry.kind === 'function_call') {
      const callId =
        item.type === 'item_reference' ? items.get(entry.id ?? '')?.callId : item.call_id;
      calls.push(String(callId));
    }
    if (item.type === 'function_call_output') {
      const callId = String(item.call_id);
      if (!calls.includes(callId)) {
        return {
          status: 400,
          message: `No tool call found for function call output with call_id ${callId}.`,
        };
      }
      answered.add(callId);
    }
  }
  const missing = calls.find((callId) => !answered.has(callId));
  if (missing !== undefined) {
    return { status: 400, message: `No tool output found for function call ${missing}.` };
  }
  return null;
}

/**
 * Start a scripted Responses server. Its `url` is a base URL for
 * `createOpenAI({ baseURL: url, apiKey })`; the provider posts to `${url}/responses`.
 *
 * @example
 * import { createOpenAI } from '@ai-sdk/openai';
 * import { startResponsesServer } from 'llm-agent-revival/testing';
 * const server = await startResponsesServer([{ reasoning: { id: 'rs_1' }, text: 'Hi.' }]);
 * const model = createOpenAI({ baseURL: server.url, apiKey: 'test' })('gpt-5');
 */
export async function startResponsesServer(script: ResponsesStep[]): Promise<ResponsesServer> {
  serverCount += 1;
  const tag = `s${serverCount}`;
  const steps = [...script];
  const requests: Record<string, unknown>[] = [];
  const rejections: string[] = [];
  const items = new Map<string, IssuedItem>();
  const encrypted = new Map<string, string>();
  let responses = 0;

  const handle = (body: Record<string, unknown>, response: ServerResponse): void => {
    if ('status' in (steps[0] ?? {})) {
      const outage = steps.shift() as { status: number; message?: string };
      sendError(response, outage.status, outage.message ?? `scripted ${outage.status}`, null);
      return;
    }
    const problem = responsesInputError(
      (Array.isArray(body.input) ? body.input : []) as InputItem[],
      items,
      encrypted,
      body.store,
    );
    if (problem !== null) {
      rejections.push(problem.message);
      sendError(response, problem.status, problem.message, 'input');
      return;
    }
    const step = steps.shift() as TurnStep | undefined;
    if (step === undefined) {
      sendError(response, 500, 'script exhausted', null);
      return;
    }
    responses += 1;
    const built = scriptedResponse(step, {
      tag,
      number: responses,
      model: String(body.model),
      withEncrypted:
        Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content'),
    });
    for (const [blob, id] of built.blobs) encrypted.set(blob, id);
    // Only a completed response is kept, and only when the request let it be stored.
    if (built.completed) {
      for (const [id, item] of built.issued)
        items.set(id, { ...item, stored: body.store !== false });
    }
    sendEvents(response, built.events);
  };

  const server = await startScriptedServer(handle, requests, rejections, steps, '/v1/responses');
  return { ...server, items };
}

/** A scripted turn (not an outage). */
type TurnStep = Exclude<ResponsesStep, { status: number }>;

/** What the handler decided about one response before it is built. */
interface ResponseFrame {
  /** The server's tag, which makes its ids its own. */
  tag: string;
  /** Which response of this server this is, counting from 1. */
  number: number;
  model: string;
  /** Whether the request asked for `reasoning.encrypted_content`. */
  withEncrypted: boolean;
}

/** One response as built from its step: the events to send and what it handed out. */
interface BuiltResponse {
  events: Record<string, unknown>[];
  /** The output items in order, by id (not yet stored: that is the handler's decision). */
  issued: [id: string, item: IssuedItem][];
  /** Each encrypted reasoning blob handed out, with its reasoning item's id. */
  blobs: [blob: string, id: string][];
  /** The items as `response.completed` lists them. */
  final: unknown[];
  /** Whether the response ended with `response.completed` (not a scripted failure). */
  completed: boolean;
}

/** The events of one scripted turn, in the order OpenAI streams them. */
function scriptedResponse(step: TurnStep, frame: ResponseFrame): BuiltResponse {
  const built: BuiltResponse = { events: [], issued: [], blobs: [], final: [], completed: false };
  const shell = (status: string) => ({
    id: `resp_${frame.tag}_${frame.number}`,
    object: 'response',
    created_at: 1_700_000_000,
    model: frame.model,
    status,
    output: status === 'completed' ? built.final : [],
  });
  const fail = (failure: NonNullable<TurnStep['failure']>): BuiltResponse => {
    built.events.push(failureEvent(failure, shell('failed')));
    return built;
  };
  built.events.push({ type: 'response.created', response: shell('in_progress') });
  built.events.push({ type: 'response.in_progress', response: shell('in_progress') });
  if (step.failure?.after === 'created') return fail(step.failure);
  const reasoningId =
    step.reasoning === undefined ? undefined : addReasoning(built, step.reasoning, frame);
  const after = reasoningId === undefined ? {} : { reasoningId };
  if (step.text !== undefined) {
    const id = `msg_${frame.tag}_${frame.number}`;
    const half = Math.ceil(step.text.length / 2);
    const where = openMessage(built, id, step.text.slice(0, half));
    if (step.failure?.after === 'output') return fail(step.failure);
    closeMessage(built, where, step.text, step.text.slice(half));
    built.issued.push([id, { type: 'message', stored: false, response: frame.number, ...after }]);
  } else if (step.failure?.after === 'output') {
    return fail(step.failure);
  }
  for (const [index, call] of (step.calls ?? []).entries()) {
    const id = `fc_${frame.tag}_${frame.number}_${index}`;
    addCall(built, id, call);
    built.issued.push([
      id,
      { type: 'function_call', stored: false, response: frame.number, callId: call.id, ...after },
    ]);
  }
  built.events.push(completedEvent(shell('completed'), step.reasoning !== undefined));
  built.completed = true;
  return built;
}

/** A reasoning item with its summary parts; returns its id. */
function addReasoning(
  built: BuiltResponse,
  reasoning: NonNullable<TurnStep['reasoning']>,
  frame: ResponseFrame,
): string {
  const id = reasoning.id;
  const outputIndex = built.issued.length;
  const blob = frame.withEncrypted ? `enc_${id}_${randomBytes(6).toString('hex')}` : undefined;
  const summary = reasoning.summary ?? [];
  built.events.push({
    type: 'response.output_item.added',
    output_index: outputIndex,
    item: { type: 'reasoning', id, summary: [] },
  });
  summary.forEach((text, summaryIndex) => {
    const part = { item_id: id, output_index: outputIndex, summary_index: summaryIndex };
    built.events.push({
      type: 'response.reasoning_summary_part.added',
      ...part,
      part: { type: 'summary_text', text: '' },
    });
    built.events.push({ type: 'response.reasoning_summary_text.delta', ...part, delta: text });
    built.events.push({ type: 'response.reasoning_summary_text.done', ...part, text });
    built.events.push({
      type: 'response.reasoning_summary_part.done',
      ...part,
      part: { type: 'summary_text', text },
    });
  });
  const item = {
    type: 'reasoning',
    id,
    summary: summary.map((text) => ({ type: 'summary_text', text })),
    ...(blob === undefined ? {} : { encrypted_content: blob }),
  };
  built.events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
  built.final.push(item);
  built.issued.push([
    id,
    {
      type: 'reasoning',
      stored: false,
      response: frame.number,
      ...(blob === undefined ? {} : { encryptedContent: blob }),
    },
  ]);
  if (blob !== undefined) built.blobs.push([blob, id]);
  return id;
}

/** Where a message's text goes in the stream. */
interface TextPlace {
  item_id: string;
  output_index: number;
  content_index: 0;
}

/** A message item opened, with the first half of its text. */
function openMessage(built: BuiltResponse, id: string, firstHalf: string): TextPlace {
  const outputIndex = built.issued.length;
  const where: TextPlace = { item_id: id, output_index: outputIndex, content_index: 0 };
  built.events.push({
    type: 'response.output_item.added',
    output_index: outputIndex,
    item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
  });
  built.events.push({
    type: 'response.content_part.added',
    ...where,
    part: { type: 'output_text', text: '', annotations: [] },
  });
  // Two deltas, so that the text is really assembled.
  built.events.push({
    type: 'response.output_text.delta',
    ...where,
    delta: firstHalf,
    logprobs: [],
  });
  return where;
}

/** The rest of an opened message: its second half, and the message done. */
function closeMessage(built: BuiltResponse, where: TextPlace, text: string, rest: string): void {
  built.events.push({ type: 'response.output_text.delta', ...where, delta: rest, logprobs: [] });
  built.events.push({ type: 'response.output_text.done', ...where, text, logprobs: [] });
  const content = [{ type: 'output_text', text, annotations: [] }];
  built.events.push({ type: 'response.content_part.done', ...where, part: content[0] });
  const item = {
    type: 'message',
    id: where.item_id,
    status: 'completed',
    role: 'assistant',
    content,
  };
  built.events.push({ type: 'response.output_item.done', output_index: where.output_index, item });
  built.final.push(item);
}

/** A function call item, its arguments in one delta. */
function addCall(
  built: BuiltResponse,
  id: string,
  call: NonNullable<TurnStep['calls']>[number],
): void {
  const outputIndex = built.issued.length;
  const argumentsText = JSON.stringify(call.input);
  const base = { type: 'function_call', id, call_id: call.id, name: call.name };
  built.events.push({
    type: 'response.output_item.added',
    output_index: outputIndex,
    item: { ...base, arguments: '', status: 'in_progress' },
  });
  built.events.push({
    type: 'response.function_call_arguments.delta',
    item_id: id,
    output_index: outputIndex,
    delta: argumentsText,
  });
  built.events.push({
    type: 'response.function_call_arguments.done',
    item_id: id,
    output_index: outputIndex,
    arguments: argumentsText,
  });
  const item = { ...base, arguments: argumentsText, status: 'completed' };
  built.events.push({ type: 'response.output_item.done', output_index: outputIndex, item });
  built.final.push(item);
}

/** The scripted failure that ends a stream: an `error` event or `response.failed`. */
function failureEvent(
  failure: NonNullable<TurnStep['failure']>,
  shell: Record<string, unknown>,
): Record<string, unknown> {
  return failure.event === 'error'
    ? { type: 'error', code: failure.code, message: failure.message, param: null }
    : {
        type: 'response.failed',
        response: {
          ...shell,
          error: { code: failure.code, message: failure.message },
          incomplete_details: null,
        },
      };
}

/** `response.completed`, with the usage a small turn would report. */
function completedEvent(
  shell: Record<string, unknown>,
  reasoned: boolean,
): Record<string, unknown> {
  return {
    type: 'response.completed',
    response: {
      ...shell,
      incomplete_details: null,
      usage: {
        input_tokens: 12,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: reasoned ? 2 : 0 },
        total_tokens: 17,
      },
    },
  };
}

/** An error body as OpenAI sends it: a refusal of the input, or (no param) a server error. */
function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  param: 'input' | null,
): void {
  sendJson(response, status, {
    error: {
      message,
      type: param === null ? 'server_error' : 'invalid_request_error',
      param,
      code: null,
    },
  });
}

/** SSE as OpenAI sends it: each event named by its type, numbered in order. */
function sendEvents(response: ServerResponse, events: Record<string, unknown>[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  events.forEach((event, sequence) => {
    response.write(`event: ${String(event.type)}\n`);
    response.write(`data: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`);
  });
  response.end();
}
