/**
 * The exit codes of `llm-agent`, one meaning each, so that a script can rely on them
 * (docs/cli.md lists them too).
 *
 * @example
 * process.exitCode = EXIT.revivable;
 */
export const EXIT = {
  /** Done; for `status`: nothing needs doing. */
  ok: 0,
  /** Something failed: a run ended unfinished, an I/O error, an internal error. */
  failure: 1,
  /** The user's mistake: bad arguments, a missing file, `revive` without `--yes` off a terminal. */
  usage: 2,
  /** `status`: at least one run is revivable; `repair --scan`, `--dry-run`: sessions need repair. */
  revivable: 3,
  /**
   * `status`: at least one transcript is unreadable (takes precedence over 3); `revive`: nothing
   * to revive, and a transcript is unreadable; `repair`: a session was refused (unknown format
   * or version, a shape it cannot repair).
   */
  unreadable: 4,
  /** `status`: runs stopped at their revival cap, and nothing is revivable or unreadable. */
  capped: 5,
  /** `revive`: the human answered no at the prompt; nothing was written. */
  declined: 6,
  /**
   * `revive`: another reviver holds a tree to revive (or revived it after the plan was made);
   * `repair`: a session looks live (its client may still be writing it). Nothing was written.
   */
  claimed: 7,
  /** `run`, `revive`: stopped by Ctrl-C; the runs were aborted cleanly and stay revivable. */
  interrupted: 130,
} as const;

/**
 * One of {@link EXIT}'s values.
 *
 * @example
 * const code: ExitCode = statusExitCode(summarize(roots)); // EXIT.revivable when one is
 */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
