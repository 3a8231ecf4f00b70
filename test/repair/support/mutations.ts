import assert from 'node:assert/strict';
import type {
  ForeignFormat,
  ForeignLine,
  FormatDetection,
  PlanContext,
  RepairPlan,
} from '../../../src/repair/foreign-format.ts';
import { sessionLines } from '../../../src/repair/session-lines.ts';

/**
 * Random damage for the format tests: a session's lines edited the ways files get damaged,
 * and JSON values changed somewhere inside.
 */

/**
 * Replace one value somewhere inside `value` (objects and arrays walked at random) by one of
 * `odd`; sometimes add one under one of `keys`, or delete one.
 */
export function mutateValue(
  value: unknown,
  next: () => number,
  odd: readonly unknown[],
  keys: readonly string[],
): unknown {
  const pick = odd[Math.floor(next() * odd.length)];
  if (typeof value !== 'object' || value === null || next() < 0.2) return pick;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value)
    ? [...value]
    : { ...(value as Record<string, unknown>) };
  const present = Object.keys(copy);
  if (present.length === 0 || next() < 0.1) {
    if (Array.isArray(copy)) copy.push(pick);
    else copy[keys[Math.floor(next() * keys.length)] as string] = pick;
    return copy;
  }
  const key = present[Math.floor(next() * present.length)] as string;
  if (next() < 0.15) {
    if (Array.isArray(copy)) copy.splice(Number(key), 1);
    else delete copy[key];
    return copy;
  }
  (copy as Record<string, unknown>)[key] = mutateValue(
    (copy as Record<string, unknown>)[key],
    next,
    odd,
    keys,
  );
  return copy;
}

/**
 * One to three edits of a session's lines: a value changed inside a line, a line cut short,
 * removed, doubled, or the file rotated at a line.
 */
export function mutateLines(
  original: readonly string[],
  next: () => number,
  mutate: (value: unknown) => unknown,
): string[] {
  let lines = [...original];
  const edits = 1 + Math.floor(next() * 3);
  for (let edit = 0; edit < edits; edit += 1) {
    const at = Math.floor(next() * lines.length);
    const line = lines[at] as string;
    const how = next();
    if (how < 0.55) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      lines[at] = JSON.stringify(mutate(value));
    } else if (how < 0.7) {
      lines[at] = line.slice(0, Math.floor(next() * line.length));
    } else if (how < 0.8) {
      lines.splice(at, 1);
    } else if (how < 0.9) {
      lines.splice(at, 0, line);
    } else {
      lines = [...lines.slice(at), ...lines.slice(0, at)];
    }
  }
  return lines;
}

/**
 * The format tests' mutation rounds: each of `rounds` edits one of `sessions` (whole texts,
 * taken in turn) with {@link mutateLines}; a detected, supported session is planned. A plan
 * that is not a repair gives its own reason (never the never-throwing wrapper's "could not
 * plan"); a repair answers each call with one appended line, which `checkRepair` examines.
 * The outcomes are printed, and each kind must come up often enough to have been tested.
 */
export function mutationRounds(options: {
  format: ForeignFormat;
  sessions: readonly string[];
  next: () => number;
  odd: readonly unknown[];
  keys: readonly string[];
  context: () => PlanContext;
  rounds?: number;
  checkRepair: (
    result: Extract<RepairPlan, { kind: 'repair' }>,
    parsed: ForeignLine[],
    detection: FormatDetection,
  ) => void;
}): void {
  const { format, sessions, next, odd, keys } = options;
  const kinds: Record<string, number> = { repair: 0, clean: 0, refuse: 0, undetected: 0 };
  for (let round = 0; round < (options.rounds ?? 3000); round += 1) {
    const session = sessions[round % sessions.length] as string;
    const lines = mutateLines(session.split('\n').slice(0, -1), next, (value) =>
      mutateValue(value, next, odd, keys),
    );
    const text = `${lines.join('\n')}\n`;
    const parsed = sessionLines(Buffer.from(text)).lines;
    const detection = format.detect(parsed);
    if (detection === null || !detection.supported) {
      kinds.undetected = (kinds.undetected ?? 0) + 1;
      continue;
    }
    const result = format.plan(parsed, options.context());
    kinds[result.kind] = (kinds[result.kind] ?? 0) + 1;
    if (result.kind !== 'repair') {
      assert.doesNotMatch(result.detail, /could not plan/, `${result.detail}\n${text}`);
      continue;
    }
    assert.equal(result.append.length, result.calls.length);
    options.checkRepair(result, [...parsed], detection);
  }
  console.log('mutation outcomes', kinds);
  assert.ok((kinds.repair ?? 0) > 100 && (kinds.refuse ?? 0) > 10 && (kinds.clean ?? 0) > 100);
}
