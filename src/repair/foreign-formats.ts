import { claudeCodeFormat } from './claude-code-format.ts';
import { codexFormat } from './codex-format.ts';
import type { ForeignFormat } from './foreign-format.ts';
import { piFormat } from './pi-format.ts';

/**
 * The formats `repair` recognises, in the order it tries them.
 *
 * @example
 * const names = FOREIGN_FORMATS.map((format) => format.name); // ['claude-code', 'codex', 'pi']
 */
export const FOREIGN_FORMATS: readonly ForeignFormat[] = [claudeCodeFormat, codexFormat, piFormat];
