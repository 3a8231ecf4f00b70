/**
 * The CLI's name for `Revival.inspect`'s answer.
 *
 * @module
 */
export type { Inspection as InspectionView } from '../revival/index.ts';
