import { claudeCodeFormat } from './claude-code-format.ts';
import { codexFormat } from './codex-format.ts';
import type { ForeignFormat } from './foreign-format.ts';
import { geminiFormat } from './gemini-format.ts';
import { piFormat } from './pi-format.ts';

/**
 * The formats `repair` recognises in a session file, in the order it tries them (an opencode
 * database is not a file of lines: `repairFile` sends it to its own repair).
 *
 * @example
 * const names = FOREIGN_FORMATS.map((format) => format.name); // ['claude-code', 'codex', 'pi', 'gemini-cli']
 */
export const FOREIGN_FORMATS: readonly ForeignFormat[] = [
  claudeCodeFormat,
  codexFormat,
  piFormat,
  geminiFormat,
];
