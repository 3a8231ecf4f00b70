import type { Attack } from './support.ts';
export const TERMINAL_ATTACKS: Attack[] = [];
