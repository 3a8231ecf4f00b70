import type { Attack } from './support.ts';
export const INPUT_ATTACKS: Attack[] = [];
