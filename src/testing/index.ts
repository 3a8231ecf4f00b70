/**
 * `llm-agent-revival/testing`: what this package's own tests are built on, for tests of code
 * that uses it — as `ai/test` is for the AI SDK. Nothing here touches the network or a real
 * provider.
 *
 * - {@link MemoryFileSystem}: the transcript layer's file system in memory, with Linux
 *   semantics and a model of durability, so a test can ask what a power cut would leave
 *   (`crashImage`).
 * - {@link FaultyFileSystem}: wraps any file system and fails the calls a rule names (`EIO`,
 *   `ENOSPC`, short writes, a crash at exactly one call), recording what fired.
 * - {@link ScriptedModel}: an AI SDK language model that answers a script of steps and records
 *   every prompt that breaks the providers' tool-call pairing rules.
 * - {@link startChatServer}, {@link startAnthropicServer}, {@link startResponsesServer},
 *   {@link startOutageChatServer}: strict stand-ins for OpenAI Chat Completions, Anthropic
 *   Messages and OpenAI Responses on 127.0.0.1, answering with the provider's own 400 when a
 *   request breaks its rules.
 *
 * @example
 * import { Session } from 'llm-agent-revival';
 * import { MemoryFileSystem, ScriptedModel } from 'llm-agent-revival/testing';
 * const fileSystem = new MemoryFileSystem();
 * const scripted = new ScriptedModel([{ text: 'Hello.' }]);
 * const meta = { agentId: 'main', agentType: 'main', label: 'Main', model: 'scripted' };
 * const session = await Session.create('/runs/main.jsonl', meta, { fileSystem });
 * // … run a Loop with backends: [scripted.model], then:
 * console.log(scripted.violations.length === 0);
 *
 * @module
 */
export {
  fileSystemError,
  MemoryFileSystem,
} from './memory-file-system.ts';
export {
  type FaultRule,
  FaultyFileSystem,
} from './faulty-file-system.ts';
export {
  httpError,
  pairingProblems,
  ScriptedModel,
  type ScriptStep,
} from './scripted-model.ts';
export {
  startAnthropicServer,
  startChatServer,
  startOutageChatServer,
} from './provider-servers.ts';
export {
  type ResponsesStep,
  startResponsesServer,
} from './responses-server.ts';
