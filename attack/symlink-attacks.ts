import type { Attack } from './support.ts';
export const SYMLINK_ATTACKS: Attack[] = [];
