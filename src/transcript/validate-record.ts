import {
  FORMAT_VERSION,
  type ForeignRecord,
  IDEMPOTENCIES,
  type JsonValue,
  RECONCILE_VERDICTS,
  RECORD_TYPES,
  type TranscriptRecord,
} from './records.ts';

/**
 * Why a parsed line is not a valid record: the field at fault and what is wrong with it.
 *
 * @example
 * const problem: RecordProblem = {
 *   kind: 'invalid', field: 'content.2.callId', message: 'must be a string',
 * };
 */
export interface RecordProblem {
  /** `newer-version` for a record from a newer writer; `invalid` for anything else. */
  kind: 'invalid' | 'newer-version';
  /** A dotted path to the offending field, such as `content.2.callId`. */
  field: string;
  message: string;
}

/**
 * The outcome of {@link validateRecord}.
 *
 * @example
 * const result: ValidateResult = validateRecord(JSON.parse(text));
 * if (!result.ok) console.error(`${result.problem.field} ${result.problem.message}`);
 */
export type ValidateResult =
  | { ok: true; record: TranscriptRecord | ForeignRecord }
  | { ok: false; problem: RecordProblem };

class Invalid {
  readonly field: string;
  readonly message: string;
  constructor(field: string, message: string) {
    this.field = field;
    this.message = message;
  }
}

type Bag = Record<string, unknown>;

function isObject(value: unknown): value is Bag {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function string(bag: Bag, field: string, path: string): string {
  const value = bag[field];
  if (typeof value !== 'string') throw new Invalid(path + field, 'must be a string');
  return value;
}

function optionalString(bag: Bag, field: string, path: string): void {
  if (bag[field] !== undefined) string(bag, field, path);
}

function integer(bag: Bag, field: string, path: string, minimum: number): number {
  const value = bag[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    throw new Invalid(path + field, `must be an integer >= ${minimum}`);
  }
  return value;
}

function oneOf(bag: Bag, field: string, path: string, allowed: readonly string[]): void {
  const value = bag[field];
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw new Invalid(path + field, `must be one of ${allowed.join(', ')}`);
  }
}

function stringArray(bag: Bag, field: string, path: string): void {
  const value = bag[field];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new Invalid(path + field, 'must be an array of strings');
  }
}

function optionalObject(bag: Bag, field: string, path: string): void {
  if (bag[field] !== undefined && !isObject(bag[field])) {
    throw new Invalid(path + field, 'must be an object');
  }
}

const ROLES = ['system', 'user', 'assistant', 'tool'] as const;
const PARTS_BY_ROLE: Record<string, readonly string[]> = {
  system: ['text'],
  user: ['text'],
  assistant: ['text', 'reasoning', 'tool-call'],
  tool: ['tool-result'],
};

function validatePart(part: unknown, role: string, path: string): void {
  if (!isObject(part)) throw new Invalid(path.slice(0, -1), 'must be an object');
  const allowed = PARTS_BY_ROLE[role] ?? [];
  oneOf(part, 'type', path, allowed);
  optionalObject(part, 'provider', path);
  switch (part.type) {
    case 'text':
    case 'reasoning':
      string(part, 'text', path);
      return;
    case 'tool-call':
      string(part, 'callId', path);
      string(part, 'toolName', path);
      if (!('input' in part)) throw new Invalid(`${path}input`, 'is missing');
      return;
    case 'tool-result':
      string(part, 'callId', path);
      string(part, 'toolName', path);
      if (!('output' in part)) throw new Invalid(`${path}output`, 'is missing');
      if (typeof part.isError !== 'boolean')
        throw new Invalid(`${path}isError`, 'must be a boolean');
      return;
  }
}

/** A reconcile's recorded answer (format 2): `{ answer, detail? }`. */
function reconcileRecord(value: unknown, path: string): void {
  if (!isObject(value)) throw new Invalid(path, 'must be an object');
  oneOf(value, 'answer', `${path}.`, RECONCILE_VERDICTS);
  optionalString(value, 'detail', `${path}.`);
}

function validateBody(bag: Bag): void {
  switch (bag.type) {
    case 'session-meta':
      string(bag, 'agentId', '');
      string(bag, 'agentType', '');
      string(bag, 'label', '');
      string(bag, 'model', '');
      if (bag.parent !== undefined) {
        if (!isObject(bag.parent)) throw new Invalid('parent', 'must be an object');
        string(bag.parent, 'transcript', 'parent.');
        string(bag.parent, 'callId', 'parent.');
      }
      return;
    case 'message': {
      oneOf(bag, 'role', '', ROLES);
      const content = bag.content;
      if (!Array.isArray(content)) throw new Invalid('content', 'must be an array');
      for (let index = 0; index < content.length; index++) {
        try {
          validatePart(content[index], bag.role as string, '');
        } catch (error) {
          // The part's path is spelled out only for a part at fault: not a string per part.
          if (!(error instanceof Invalid)) throw error;
          const field = error.field === '' ? '' : `.${error.field}`;
          throw new Invalid(`content.${index}${field}`, error.message);
        }
      }
      optionalObject(bag, 'extras', '');
      if (isObject(bag.extras) && bag.extras.injected !== undefined) {
        oneOf(bag.extras, 'injected', 'extras.', ['revival', 'background', 'compaction']);
      }
      if (isObject(bag.extras) && bag.extras.reconcile !== undefined) {
        reconcileRecord(bag.extras.reconcile, 'extras.reconcile');
      }
      return;
    }
    case 'tool-dispatched':
      string(bag, 'callId', '');
      string(bag, 'toolName', '');
      string(bag, 'inputDigest', '');
      oneOf(bag, 'idempotency', '', IDEMPOTENCIES);
      optionalString(bag, 'idempotencyKey', '');
      if (bag.idempotencyDeclared !== undefined && bag.idempotencyDeclared !== false) {
        throw new Invalid('idempotencyDeclared', 'must be false when present');
      }
      if (bag.joins !== undefined) stringArray(bag, 'joins', '');
      return;
    case 'tool-settled':
      string(bag, 'callId', '');
      oneOf(bag, 'status', '', ['completed', 'failed', 'outcome-unknown']);
      optionalString(bag, 'reason', '');
      return;
    case 'compaction': {
      const from = integer(bag, 'fromSeq', '', 0);
      const to = integer(bag, 'toSeq', '', 0);
      if (to < from) throw new Invalid('toSeq', 'must not be below fromSeq');
      if (typeof bag.seq === 'number' && to >= bag.seq) {
        throw new Invalid('toSeq', 'must name records before the compaction');
      }
      string(bag, 'summary', '');
      return;
    }
    case 'run-revived':
      integer(bag, 'ordinal', '', 1);
      integer(bag, 'maxRevivals', '', 0);
      integer(bag, 'afterSeq', '', 0);
      stringArray(bag, 'interrupted', '');
      stringArray(bag, 'completedUnpersisted', '');
      stringArray(bag, 'orphaned', '');
      if (bag.reconciled !== undefined) {
        if (!Array.isArray(bag.reconciled)) throw new Invalid('reconciled', 'must be an array');
        bag.reconciled.forEach((item: unknown, index: number) => {
          reconcileRecord(item, `reconciled.${index}`);
          string(item as Bag, 'callId', `reconciled.${index}.`);
        });
      }
      return;
    case 'run-failed':
      oneOf(bag, 'cause', '', ['outage', 'rate-limited', 'auth', 'refused']);
      string(bag, 'error', '');
      integer(bag, 'backend', '', 1);
      string(bag, 'model', '');
      integer(bag, 'attempts', '', 0);
      if (bag.retryAfterMs !== undefined) integer(bag, 'retryAfterMs', '', 0);
      return;
    case 'run-stopped':
      string(bag, 'reason', '');
      return;
    case 'checkpoint':
      if (!isObject(bag.state)) throw new Invalid('state', 'must be an object');
      return;
  }
}

/**
 * Check that a parsed JSON value is a record of format 1 or 2 (or a record of an unknown type,
 * which is kept and ignored). Pure; never throws. `readerVersion` reads as a reader of that
 * version would (the default: this one's, {@link FORMAT_VERSION}).
 *
 * @example
 * const result = validateRecord(JSON.parse('{"v":1,"seq":0,"type":"message","at":"today"}'));
 * if (!result.ok) console.error(`${result.problem.field}: ${result.problem.message}`);
 */
export function validateRecord(value: unknown, readerVersion = FORMAT_VERSION): ValidateResult {
  try {
    if (!isObject(value)) throw new Invalid('', 'a record must be a JSON object');
    const version = integer(value, 'v', '', 1);
    // `readerVersion` below FORMAT_VERSION is how the tests read as an older reader would.
    if (version > readerVersion) {
      return {
        ok: false,
        problem: {
          kind: 'newer-version',
          field: 'v',
          message: `format version ${version} is newer than this reader's ${readerVersion}`,
        },
      };
    }
    integer(value, 'seq', '', 0);
    string(value, 'type', '');
    string(value, 'at', '');
    if (value.tailRepair !== undefined) {
      if (!isObject(value.tailRepair)) throw new Invalid('tailRepair', 'must be an object');
      integer(value.tailRepair, 'validBytes', 'tailRepair.', 0);
      integer(value.tailRepair, 'tornBytes', 'tailRepair.', 1);
      string(value.tailRepair, 'sidecar', 'tailRepair.');
      const repair = value.tailRepair;
      if (repair.possiblyDispatched !== undefined && repair.possiblyDispatched !== true) {
        throw new Invalid('tailRepair.possiblyDispatched', 'must be true when present');
      }
      if (repair.wholeLines !== undefined) integer(repair, 'wholeLines', 'tailRepair.', 1);
    }
    if (!RECORD_TYPES.has(value.type as string)) {
      const foreign = { ...(value as Record<string, JsonValue>), unknown: true };
      return { ok: true, record: foreign as unknown as ForeignRecord };
    }
    validateBody(value);
    return { ok: true, record: value as unknown as TranscriptRecord };
  } catch (error) {
    if (error instanceof Invalid) {
      return {
        ok: false,
        problem: { kind: 'invalid', field: error.field, message: error.message },
      };
    }
    throw error;
  }
}

/**
 * True for a record of a type this reader knows (a newer writer's unknown types are kept and
 * ignored).
 *
 * @example
 * const known = records.filter(isKnownRecord);
 */
export function isKnownRecord(
  record: TranscriptRecord | ForeignRecord,
): record is TranscriptRecord {
  return !('unknown' in record && record.unknown === true);
}
