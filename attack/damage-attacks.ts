import type { Attack } from './support.ts';
export const DAMAGE_ATTACKS: Attack[] = [];
