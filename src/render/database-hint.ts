import { quote } from './format-status.ts';

/**
 * `--database URL [--schema NAME]` for a command the CLI suggests, with the URL the user gave,
 * so that it runs when pasted — unless the URL holds a password, which is never printed: it is
 * masked, and `masked` tells the caller to say so. The schema is named when one was given.
 *
 * @example
 * databaseOptions('postgres://u@db/app', 'fleet').args; // '--database postgres://u@db/app --schema fleet'
 * databaseOptions('postgres://u:pw@db/app', undefined); // { args: '--database postgres://u:***@db/app', masked: true }
 */
export function databaseOptions(
  url: string,
  schema: string | undefined,
): { args: string; masked: boolean } {
  let shown = url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    if (parsed.toString() !== new URL(url).toString()) shown = parsed.toString();
  } catch {
    // Not a URL (a libpq keyword string, say): shown as given, quoted for the shell.
  }
  const withSchema = schema === undefined || schema === '' ? '' : ` --schema ${quote(schema)}`;
  return { args: `--database ${quote(shown)}${withSchema}`, masked: shown !== url };
}

/**
 * What to add after a hint whose URL was masked ('' when nothing was).
 *
 * @example
 * const target = databaseOptions(url, schema);
 * console.error(`Next: llm-agent status ${target.args}${maskedNote(target.masked)}`);
 */
export function maskedNote(masked: boolean): string {
  return masked ? ' (the password is masked: put yours back)' : '';
}
