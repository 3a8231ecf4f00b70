import type { JsonValue } from '../transcript/records.ts';

/** The part of JSON Schema this checker reads; anything else in a schema is ignored. */
interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  enum?: JsonValue[];
  const?: JsonValue;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

/**
 * Check a value against the common subset of JSON Schema (type, properties, required,
 * additionalProperties, items, enum, const, anyOf/oneOf, numeric and length bounds), for
 * tools declared with a bare `jsonSchema(...)` that brings no validator of its own. Keywords
 * it does not know are ignored (so a schema can only be checked less strictly, never more).
 * Returns the problems found, each naming the path (`input.items[2].name: expected string`);
 * an empty list means the value passes. Never throws.
 *
 * @example
 * checkJsonSchema({ type: 'object', required: ['path'] }, {});
 * // ['input: missing required property "path"']
 */
export function checkJsonSchema(schema: unknown, value: JsonValue): string[] {
  const problems: string[] = [];
  try {
    check(schema as SchemaNode, value, 'input', problems);
  } catch {
    // A schema too strange to read is not the model's fault: let the tool see the input.
  }
  return problems.slice(0, 10);
}

function check(schema: SchemaNode, value: JsonValue, path: string, problems: string[]): void {
  if (typeof schema !== 'object' || schema === null) return;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => hasType(value, type))) {
      problems.push(`${path}: expected ${types.join(' or ')}, got ${typeName(value)}`);
      return;
    }
  }
  if (schema.const !== undefined && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    problems.push(`${path}: must be ${JSON.stringify(schema.const)}`);
  }
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))
  ) {
    problems.push(
      `${path}: must be one of ${schema.enum.map((x) => JSON.stringify(x)).join(', ')}`,
    );
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    const passes = alternatives.some((alternative) => {
      const found: string[] = [];
      check(alternative, value, path, found);
      return found.length === 0;
    });
    if (!passes) problems.push(`${path}: matches none of the allowed shapes`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) {
      problems.push(`${path}: must be at least ${schema.minimum}`);
    }
    if (typeof schema.maximum === 'number' && value > schema.maximum) {
      problems.push(`${path}: must be at most ${schema.maximum}`);
    }
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) {
      problems.push(`${path}: must be at least ${schema.minLength} characters`);
    }
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) {
      problems.push(`${path}: must be at most ${schema.maxLength} characters`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
      problems.push(`${path}: must have at least ${schema.minItems} items`);
    }
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
      problems.push(`${path}: must have at most ${schema.maxItems} items`);
    }
    if (schema.items !== undefined) {
      value.forEach((item, index) => {
        check(schema.items as SchemaNode, item, `${path}[${index}]`, problems);
      });
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const name of schema.required ?? []) {
      if (!Object.hasOwn(value, name))
        problems.push(`${path}: missing required property "${name}"`);
    }
    const properties = schema.properties ?? {};
    for (const [name, member] of Object.entries(value)) {
      if (member === undefined) continue;
      const memberSchema = Object.hasOwn(properties, name) ? properties[name] : undefined;
      if (memberSchema !== undefined) {
        check(memberSchema, member, `${path}.${name}`, problems);
      } else if (schema.additionalProperties === false) {
        problems.push(`${path}: unexpected property "${name}"`);
      } else if (typeof schema.additionalProperties === 'object') {
        check(schema.additionalProperties, member, `${path}.${name}`, problems);
      }
    }
  }
}

function hasType(value: JsonValue, type: string): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function typeName(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
