import { setFlagsFromString } from 'node:v8';

let applied = false;

/**
 * Turn off V8's allocation-site pretenuring for the rest of the process, once. `status`, which
 * ends when it has inspected its folder, calls it first.
 *
 * Why: inspecting thousands of transcripts one after another is a long run of short-lived
 * objects. In about half of the runs of `status` over the bench's 10,000 transcripts, V8
 * decided early on to allocate some of them straight into the old generation. It then grew
 * by about 5 KB a transcript with garbage that no scavenge frees, and the young generation
 * grew to 128 MiB. Those runs took 1.45 s instead of 0.8 s for the same reads, a large part of
 * why `status` took anywhere from 1.5 s to 2.7 s on the same folder. With pretenuring off,
 * 8 runs of 8 took the fast path (`docs/performance.md`, goal 2).
 *
 * V8 reads the flag when it collects garbage, to decide where later objects are allocated:
 * turning it off at run time moves no object, and a site it had already marked stays marked.
 * Called first, before any such decision, it leaves V8 allocating every short-lived object
 * young, which is what they are. Nothing else in V8 is changed.
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
