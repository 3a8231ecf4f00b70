/**
 * A language model with no network and no randomness: every answer is a pure function of the
 * prompt it is sent. The demo uses it so that the process that crashes and the process that
 * revives make the same decisions from the same conversation — exactly what a transcript-driven
 * revival needs to be shown honestly without an API key.
 *
 * It implements the AI SDK's `LanguageModelV4` specification directly (not `ai/test`, which is
 * a test helper and not a runtime dependency).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type {
  JSONValue,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';

/**
 * One tool call as a script sees it in the prompt.
 *
 * @example
 * const calls: ScriptToolCall[] = prompt.turns.flatMap((turn) => turn.toolCalls);
 */
export interface ScriptToolCall {
  callId: string;
  toolName: string;
  input: unknown;
}

/**
 * One tool result as a script sees it in the prompt: `output` is text or parsed JSON.
 *
 * @example
 * const results: ScriptToolResult[] = prompt.turns.flatMap((turn) => turn.toolResults);
 * const last = results.at(-1);
 * if (last?.isError) return { text: `the ${last.toolName} call failed` };
 */
export interface ScriptToolResult {
  callId: string;
  toolName: string;
  output: unknown;
  isError: boolean;
}

/**
 * One turn of the prompt, flattened to what a script decides on.
 *
 * @example
 * const asked = prompt.turns.filter((turn: ScriptTurn) => turn.role === 'user').at(-1)?.text;
 */
export interface ScriptTurn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  text: string;
  toolCalls: ScriptToolCall[];
  toolResults: ScriptToolResult[];
}

/**
 * What a script is given: the system prompt, the turns, and the names of the offered tools.
 *
 * @example
 * const script = (prompt: ScriptPrompt): ScriptAnswer =>
 *   prompt.toolNames.includes('read_file') ? { text: 'I can read files' } : { text: 'hello' };
 */
export interface ScriptPrompt {
  system: string;
  turns: ScriptTurn[];
  toolNames: string[];
}

/**
 * What a script answers: some text, some tool calls (ids are assigned by the model), or both.
 *
 * @example
 * const answer: ScriptAnswer = {
 *   text: 'Reading it.',
 *   toolCalls: [{ toolName: 'read_file', input: { path: 'a.md' } }],
 * };
 */
export interface ScriptAnswer {
  text?: string;
  toolCalls?: { toolName: string; input: JSONValue }[];
}

/**
 * A script: must be pure — the same prompt always gives the same answer.
 *
 * @example
 * const echo: Script = (prompt) => ({ text: prompt.turns.at(-1)?.text ?? '' });
 */
export type Script = (prompt: ScriptPrompt) => ScriptAnswer;

/**
 * Options of {@link createPromptModel}.
 *
 * @example
 * const model = createPromptModel({ script: echo, modelId: 'echo' });
 */
export interface PromptModelOptions {
  script: Script;
  /** Shown as the model id (default `scripted`). */
  modelId?: string;
}

/**
 * Make a `LanguageModelV4` whose every answer is `script(prompt)`. Tool call ids are derived
 * from a digest of the prompt and the call's position, so they too are a function of the
 * prompt. Usage is estimated at four characters a token.
 *
 * @example
 * import { generateText } from 'ai';
 * const model = createPromptModel({ script: () => ({ text: 'hello' }) });
 * const { text } = await generateText({ model, prompt: 'hi' }); // 'hello'
 */
export function createPromptModel(options: PromptModelOptions): LanguageModelV4 {
  const modelId = options.modelId ?? 'scripted';
  const answer = (call: LanguageModelV4CallOptions): LanguageModelV4GenerateResult => {
    const prompt = readPrompt(call);
    const decided = options.script(prompt);
    const digest = createHash('sha256')
      .update(JSON.stringify(call.prompt))
      .digest('hex')
      .slice(0, 8);
    const content: LanguageModelV4Content[] = [];
    if (decided.text !== undefined && decided.text !== '') {
      content.push({ type: 'text', text: decided.text });
    }
    (decided.toolCalls ?? []).forEach((toolCall, index) => {
      content.push({
        type: 'tool-call',
        toolCallId: `call_${digest}_${index}`,
        toolName: toolCall.toolName,
        input: JSON.stringify(toolCall.input),
      });
    });
    const calls = decided.toolCalls?.length ?? 0;
    return {
      content,
      finishReason: { unified: calls > 0 ? 'tool-calls' : 'stop', raw: undefined },
      usage: estimateUsage(call.prompt, content),
      warnings: [],
      response: { id: `response_${digest}`, modelId, timestamp: new Date(0) },
    };
  };
  return {
    specificationVersion: 'v4',
    provider: 'llm-agent-scripted',
    modelId,
    supportedUrls: {},
    doGenerate: async (call) => answer(call),
    doStream: async (call): Promise<LanguageModelV4StreamResult> => {
      const result = answer(call);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const [index, part] of result.content.entries()) {
        if (part.type === 'text') {
          const id = `text_${index}`;
          parts.push({ type: 'text-start', id });
          parts.push({ type: 'text-delta', id, delta: part.text });
          parts.push({ type: 'text-end', id });
        } else if (part.type === 'tool-call') {
          parts.push(part);
        }
      }
      parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

/** Flatten a provider prompt into the turns a script reads. */
function readPrompt(call: LanguageModelV4CallOptions): ScriptPrompt {
  const systems: string[] = [];
  const turns: ScriptTurn[] = [];
  for (const message of call.prompt) {
    const turn: ScriptTurn = { role: message.role, text: '', toolCalls: [], toolResults: [] };
    if (message.role === 'system') {
      systems.push(message.content);
      turn.text = message.content;
      turns.push(turn);
      continue;
    }
    const texts: string[] = [];
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'tool-call') {
        turn.toolCalls.push({
          callId: part.toolCallId,
          toolName: part.toolName,
          input: part.input,
        });
      } else if (part.type === 'tool-result') {
        turn.toolResults.push(readToolResult(part));
      }
    }
    turn.text = texts.join('\n');
    turns.push(turn);
  }
  const toolNames = (call.tools ?? []).map((tool) => tool.name);
  return { system: systems.join('\n'), turns, toolNames };
}

function readToolResult(part: {
  toolCallId: string;
  toolName: string;
  output: { type: string; value?: unknown };
}): ScriptToolResult {
  const { output } = part;
  const isError = output.type === 'error-text' || output.type === 'error-json';
  let value: unknown = output.value;
  if (output.type === 'text' || output.type === 'error-text') {
    value = parseMaybeJson(String(output.value));
  } else if (output.type !== 'json' && output.type !== 'error-json') {
    value = output;
  }
  return { callId: part.toolCallId, toolName: part.toolName, output: value, isError };
}

function parseMaybeJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}

function estimateUsage(
  prompt: LanguageModelV4Prompt,
  content: LanguageModelV4Content[],
): LanguageModelV4Usage {
  const input = Math.ceil(JSON.stringify(prompt).length / 4);
  const output = Math.ceil(JSON.stringify(content).length / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}
