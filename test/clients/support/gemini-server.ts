/*
 * A strict scripted Gemini API (`generativelanguage`, v1beta) on 127.0.0.1 for the real Gemini
 * CLI: each model turn (`:streamGenerateContent?alt=sse`) is the next step of the script; a side
 * request (`:generateContent` — Gemini CLI's routing classifier, which asks for a JSON object
 * of a given schema) is answered aside with an object of that schema. A turn request whose
 * contents break Gemini's pairing rule (a model turn's function calls must be answered, one
 * function response each, by the next user turn) is refused with Gemini's own 400.
 */
import type { ServerResponse } from 'node:http';
import {
  type ScriptedServer,
  sendJson,
  startScriptedServer,
  type WireStep,
} from '../../../src/testing/provider-servers.ts';

interface GeminiPart {
  text?: string;
  functionCall?: { id?: string; name: string; args?: unknown };
  functionResponse?: { id?: string; name: string; response?: unknown };
}

interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

/** Gemini's 400 for unanswered or extra function calls, in its words, or null. */
export function geminiPairingError(contents: readonly GeminiContent[]): string | null {
  for (let index = 0; index < contents.length; index += 1) {
    const calls = (contents[index]?.parts ?? []).filter((part) => part.functionCall !== undefined);
    if (calls.length === 0 || contents[index]?.role !== 'model') continue;
    const next = contents[index + 1];
    if (next === undefined) continue; // a call still being made: not a history
    const answers = (next.parts ?? []).filter((part) => part.functionResponse !== undefined);
    if (answers.length !== calls.length) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
  }
  return null;
}

/** Every turn request a scripted Gemini server received, with its model and its contents. */
export interface GeminiServer extends ScriptedServer {
  /** The model-turn requests (not the routing ones), in order. */
  turns: Record<string, unknown>[];
}

/**
 * Start the server; `url` is its origin (`GOOGLE_GEMINI_BASE_URL`), not a `/v1` path.
 *
 * @example
 * const server = await startGeminiServer([{ text: 'Hi.' }]);
 */
export async function startGeminiServer(script: WireStep[]): Promise<GeminiServer> {
  const steps = [...script];
  const requests: Record<string, unknown>[] = [];
  const rejections: string[] = [];
  const turns: Record<string, unknown>[] = [];
  const server = await startScriptedServer(
    (body, response) => answer(body, response, steps, rejections, turns),
    requests,
    rejections,
    steps,
  );
  return Object.assign(server, { url: server.url.replace(/\/v1$/, ''), turns });
}

function answer(
  body: Record<string, unknown>,
  response: ServerResponse,
  steps: WireStep[],
  rejections: string[],
  turns: Record<string, unknown>[],
): void {
  const config = (body.generationConfig ?? {}) as { responseJsonSchema?: JsonSchema };
  if (config.responseJsonSchema !== undefined) {
    send(response, false, [{ text: JSON.stringify(example(config.responseJsonSchema)) }]);
    return;
  }
  turns.push(body);
  const problem = geminiPairingError((body.contents ?? []) as GeminiContent[]);
  if (problem !== null) {
    rejections.push(problem);
    sendJson(response, 400, { error: { code: 400, message: problem, status: 'INVALID_ARGUMENT' } });
    return;
  }
  const step = steps.shift();
  if (step === undefined || 'status' in step) {
    sendJson(response, step?.status ?? 500, {
      error: { code: step?.status ?? 500, message: 'script exhausted', status: 'INTERNAL' },
    });
    return;
  }
  const parts: GeminiPart[] = [];
  if (step.text !== undefined) parts.push({ text: step.text });
  for (const call of step.calls ?? []) {
    parts.push({ functionCall: { id: call.id, name: call.name, args: call.input } });
  }
  send(response, true, parts);
}

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
}

/** A value of `schema`: its first enum value, or a plain one of its type. */
function example(schema: JsonSchema): unknown {
  if (schema.enum !== undefined) return schema.enum[0];
  const type = (schema.type ?? 'string').toLowerCase();
  if (type === 'object') {
    return Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([key, value]) => [key, example(value)]),
    );
  }
  if (type === 'integer' || type === 'number') return 50;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  return 'scripted';
}

/** One candidate with `parts`, as SSE (a stream of one chunk) or as JSON. */
function send(response: ServerResponse, stream: boolean, parts: GeminiPart[]): void {
  const payload = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3, totalTokenCount: 15 },
    modelVersion: 'scripted',
  };
  if (!stream) {
    sendJson(response, 200, payload);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.end(`data: ${JSON.stringify(payload)}\n\n`);
}
