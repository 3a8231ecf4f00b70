/**
 * The revival cap the CLI assumes when `--max-revivals` is not given.
 *
 * @example
 * integerOption('status', '--max-revivals', values['max-revivals'], DEFAULT_MAX_REVIVALS);
 */
export const DEFAULT_MAX_REVIVALS = 3;
