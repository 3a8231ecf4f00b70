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
