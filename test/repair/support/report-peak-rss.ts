/*
 * Loaded with `node --import` into a child that runs the CLI: at exit it writes the process's
 * peak resident set (resourceUsage().maxRSS, KiB) to stderr as `peak-rss-kib=N`, whatever the
 * command did. The memory tests read it there.
 */
process.on('exit', () => {
  process.stderr.write(`\npeak-rss-kib=${process.resourceUsage().maxRSS}\n`);
});
