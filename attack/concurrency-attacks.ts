import type { Attack } from './support.ts';
export const CONCURRENCY_ATTACKS: Attack[] = [];
