import { setFlagsFromString } from 'node:v8';

let applied = false;

/**
 * Turn off V8's allocation-site pretenuring for the rest of the process, once. The CLI calls
 * it before it inspects a whole folder.
 *
 * Why: inspecting thousands of transcripts one after another is a long run of short-lived
 * objects. In about half of the runs of `status` over the bench's 10,000 transcripts, V8
 * decided early on to allocate some of them straight into the old generation. It then grew
 * by about 5 KB a transcript with garbage that no scavenge frees, and the young generation
 * grew to 128 MiB. Those runs took 1.45 s instead of 0.8 s for the same reads, a large part of
 * why `status` took anywhere from 1.5 s to 2.7 s on the same folder. With pretenuring off,
 * 8 runs of 8 took the fast path (`docs/performance.md`, goal 2).
 *
 * The flag is only read when V8 collects garbage, to decide where later objects go, so
 * turning it off at run time changes no object already made: a process gives up an
 * allocation heuristic, not correctness. The CLI changes nothing else in V8.
 *
 * @example
 * steadyHeap();
 * const roots = await inspectTree(paths, maxRevivals, cwd);
 */
export function steadyHeap(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString('--no-allocation-site-pretenuring');
}
