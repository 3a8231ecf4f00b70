import { type OutputUnit, type Schema, Validator } from '@cfworker/json-schema';
import type { JsonValue } from '../transcript/records.ts';

/**
 * Check a value against a JSON Schema — the whole of drafts 4, 7, 2019-09 and 2020-12 (`$ref`
 * and `$defs`, `oneOf`, `allOf`, `pattern`, formats, `exclusiveMinimum`, `uniqueItems` …), by
 * `@cfworker/json-schema` — for tools declared with a bare `jsonSchema(...)` that brings no
 * validator of its own. Chosen over Ajv for this job: no code generation (nothing is compiled
 * to a function, so it runs under any Content-Security-Policy and costs nothing at start-up), a
 * fraction of the size, and fast enough for a tool call's input. The draft is the schema's
 * `$schema` (2020-12 when it names none).
 *
 * Returns the problems found, each naming where in the input (`input.items[2].name: …`) — the
 * model reads them in the error result; an empty list means the value passes. A schema too
 * strange to read is not the model's fault: the input passes. Never throws.
 *
 * @example
 * checkJsonSchema({ type: 'object', required: ['path'] }, {});
 * // ['input: instance does not have required property "path"']
 */
export function checkJsonSchema(schema: unknown, value: JsonValue): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return typeof schema === 'boolean' && !schema ? ['input: no value is allowed'] : [];
  }
  let errors: OutputUnit[];
  try {
    const validator = new Validator(schema as Schema, draftOf(schema), false);
    errors = validator.validate(value).errors;
  } catch {
    return [];
  }
  return errors
    .filter(isLeaf)
    .map((error) => `${pathOf(error.instanceLocation)}: ${sentence(error.error)}`);
}

/** The draft a schema declares in `$schema`. */
function draftOf(schema: object): '4' | '7' | '2019-09' | '2020-12' {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared !== 'string') return '2020-12';
  if (declared.includes('draft-04')) return '4';
  if (declared.includes('draft-06') || declared.includes('draft-07')) return '7';
  if (declared.includes('2019-09')) return '2019-09';
  return '2020-12';
}

/**
 * The validator reports a failed container and then what failed inside it ("Property "path"
 * does not match schema", then the path's own error); and a failed `anyOf`/`oneOf` and then
 * every branch's errors. A person reads the innermost error, and the combinator's own verdict.
 */
function isLeaf(error: OutputUnit): boolean {
  if (
    ['properties', 'items', 'prefixItems', 'additionalItems', '$ref', 'allOf'].includes(
      error.keyword,
    )
  ) {
    return false;
  }
  if (error.keyword === 'false') return false;
  return !/\/(anyOf|oneOf|not)\/\d+/.test(error.keywordLocation) || error.keyword === 'anyOf';
}

/** `#/items/2/name` → `input.items[2].name`. */
function pathOf(pointer: string): string {
  let path = 'input';
  for (const raw of pointer.replace(/^#\/?/, '').split('/')) {
    if (raw === '') continue;
    const segment = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`;
  }
  return path;
}

function sentence(text: string): string {
  const trimmed = text.trim().replace(/\.$/, '');
  return trimmed.charAt(0).toLowerCase() + trimmed.slice(1);
}
