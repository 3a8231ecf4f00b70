/**
 * `llm-agent-revival/session`: the crash-safe transcript. It imports no model library.
 *
 * @example
 * import { Session, peek } from 'llm-agent-revival/session';
 *
 * @module
 */
export {
  blockingReadFileSystem,
  type FileIdentity,
  type FileSystem,
  nodeFileSystem,
  type OpenMode,
} from './file-system.ts';
export { decodeLine, type EncodedLine, encodeLine } from './line-codec.ts';
export { LineScanner, type ScanStart } from './line-scanner.ts';
export { type PeekResult, peek } from './peek.ts';
export { readRecords } from './read-records.ts';
// The format's types, every one public: what a transcript holds is part of the API.
export {
  FORMAT_VERSION,
  type JsonValue,
  type JsonObject,
  type Role,
  type TextPart,
  type ReasoningPart,
  type ToolCallPart,
  type ToolResultPart,
  type ContentPart,
  type Injected,
  type MessageExtras,
  type Message,
  type Idempotency,
  type SettleStatus,
  type ParentLink,
  type RecordHeader,
  type TailRepair,
  type SessionMetaBody,
  type MessageBody,
  type ToolDispatchedBody,
  type ToolSettledBody,
  type CompactionBody,
  type RunRevivedBody,
  type FailureCause,
  type RunFailedBody,
  type RunStoppedBody,
  type CheckpointBody,
  type UnknownBody,
  type RecordBody,
  type TranscriptRecord,
  type ForeignRecord,
  type RecordOf,
  RECORD_TYPES,
  AGENT_ID_PATTERN,
  isAgentId,
} from './records.ts';
export {
  type LineInfo,
  MAX_LINE_BYTES,
  type ScannedRecord,
  type ScanOptions,
  type ScanResult,
  scanRecords,
  scanTranscript,
  type DamagedTail,
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
export { needsPerson, type RunHalt } from './run-halt.ts';
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
export {
  type AcquireOptions,
  acquireWriterLock,
  type LockHolder,
  nametagPathOf,
  type WriterLock,
} from './writer-lock.ts';
export { conversationView, type ViewMessage } from './conversation-view.ts';
export { ConversationViewBuilder } from './conversation-view-builder.ts';
export { ViewLineIndex, type ViewLinesRead } from './view-line-index.ts';
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
