/**
 * `llm-agent-revival/session`: the crash-safe transcript. It imports no model library.
 *
 * @example
 * import { Session, peek } from 'llm-agent-revival/session';
 *
 * @module
 */

export { conversationView, type ViewMessage } from './conversation-view.ts';
export { ConversationViewBuilder } from './conversation-view-builder.ts';
export {
  blockingReadFileSystem,
  type FileIdentity,
  type FileSystem,
  nodeFileSystem,
  type OpenMode,
} from './file-system.ts';
export { decodeLine, type EncodedLine, encodeLine } from './line-codec.ts';
export { LineScanner, type ScanStart } from './line-scanner.ts';
export { normalizeConversation } from './normalize-conversation.ts';
export {
  ANTHROPIC_TOOL_ID_MAX_LENGTH,
  ANTHROPIC_TOOL_ID_PATTERN,
  OPENAI_CHAT_TOOL_ID_MAX_LENGTH,
  type PairingRules,
  type PairingViolation,
  type PairingViolationCode,
  pairingViolations,
} from './pairing-violations.ts';
export { type PeekResult, peek } from './peek.ts';
export { readRecords } from './read-records.ts';
// The format's types, every one public: what a transcript holds is part of the API.
export {
  AGENT_ID_PATTERN,
  type CheckpointBody,
  type CompactionBody,
  type ContentPart,
  type FailureCause,
  FORMAT_VERSION,
  type ForeignRecord,
  type Idempotency,
  type Injected,
  isAgentId,
  type JsonObject,
  type JsonValue,
  type Message,
  type MessageBody,
  type MessageExtras,
  type ParentLink,
  RECORD_TYPES,
  type ReasoningPart,
  type RecordBody,
  type RecordHeader,
  type RecordOf,
  type Role,
  type RunFailedBody,
  type RunRevivedBody,
  type RunStoppedBody,
  type SessionMetaBody,
  type SettleStatus,
  type TailRepair,
  type TextPart,
  type ToolCallPart,
  type ToolDispatchedBody,
  type ToolResultPart,
  type ToolSettledBody,
  type TranscriptRecord,
  type UnknownBody,
} from './records.ts';
export { needsPerson, type RunHalt } from './run-halt.ts';
export {
  type DamagedTail,
  type LineInfo,
  MAX_LINE_BYTES,
  type ScannedRecord,
  type ScanOptions,
  type ScanResult,
  scanRecords,
  scanTranscript,
  type TornTail,
  type UnreadableReason,
} from './scan-transcript.ts';
export {
  type Durability,
  Session,
  type SessionMeta,
  type SessionOpenOptions,
  type SessionOptions,
} from './session.ts';
export { SessionError, type SessionErrorCode } from './session-error.ts';
export {
  emptyTailState,
  foldTailState,
  type LastMessage,
  type OpenDispatch,
  type TailCall,
  type TailState,
  tailStateFromJson,
} from './tail-state.ts';
export { isKnownRecord, type RecordProblem, validateRecord } from './validate-record.ts';
export { ViewLineIndex, type ViewLinesRead } from './view-line-index.ts';
export {
  type AcquireOptions,
  acquireWriterLock,
  type LockHolder,
  nametagPathOf,
  type WriterLock,
} from './writer-lock.ts';
