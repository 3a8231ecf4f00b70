/** Inclusive ranges, sorted, neither overlapping nor touching, so that a lookup is a binary search. */
type Ranges = [from: number, to: number][];

/**
 * One survivor of a conversation view: its record's seq and the two numbers its caller gave it.
 *
 * @example
 * for (const { a: offset, b: length } of survivors.inViewOrder()) readLine(offset, length);
 */
export interface Survivor {
  seq: number;
  a: number;
  b: number;
}

/**
 * The rules of the conversation view (see {@link conversationView}) at the level of seqs, decided
 * one record at a time: which messages and compaction summaries survive the compactions seen so
 * far, and in what order they stand. Every compaction's range `[fromSeq, min(toSeq, seq - 1)]`
 * is removed, whether or not the compaction itself survives; a survivor stands at its seq, a
 * summary where its range began. A compaction only reaches records written before it, so what
 * it covers is dropped the moment it arrives, and anything arriving later in a removed range is
 * never kept: what is held is what can still be in the view.
 *
 * Each survivor carries two numbers its caller chooses (`a`, `b`) — an id, or where its line
 * lies in the file — kept in flat number arrays: no object per entry. A caller that holds the
 * messages themselves elsewhere is told through `onDrop` when one can be let go. Never throws.
 *
 * @example
 * const survivors = new ViewSurvivors();
 * survivors.addMessage(0, offset, length);
 * survivors.addCompaction(7, 0, 5, offsetOfCompaction, lengthOfCompaction);
 * const lines = survivors.inViewOrder();
 */
export class ViewSurvivors {
  readonly #onDrop: ((a: number, b: number) => void) | undefined;
  /** Surviving messages in the order added: seq, a, b. */
  #seqs: number[] = [];
  #as: number[] = [];
  #bs: number[] = [];
  /** While true, the messages are sorted by seq: a compaction drops one slice of them. */
  #inOrder = true;
  /** Surviving summaries in the order added: seq, position (the range's start), a, b. */
  #summarySeqs: number[] = [];
  #summaryPositions: number[] = [];
  #summaryAs: number[] = [];
  #summaryBs: number[] = [];
  readonly #ranges: Ranges = [];

  constructor(onDrop?: (a: number, b: number) => void) {
    this.#onDrop = onDrop;
  }

  /** How many messages and summaries survive so far. */
  get size(): number {
    return this.#seqs.length + this.#summarySeqs.length;
  }

  /** A message record; true when it survives (so far). */
  addMessage(seq: number, a: number, b = 0): boolean {
    if (isRemoved(this.#ranges, seq)) return false;
    const last = this.#seqs.at(-1);
    if (last !== undefined && !(seq >= last)) this.#inOrder = false;
    this.#seqs.push(seq);
    this.#as.push(a);
    this.#bs.push(b);
    return true;
  }

  /**
   * A compaction record: drops what its range covers; true when its own summary survives.
   */
  addCompaction(seq: number, fromSeq: number, toSeq: number, a: number, b = 0): boolean {
    // A range reaching its own record or beyond is cut there: it never hides what follows it.
    const to = Math.min(toSeq, seq - 1);
    if (to >= fromSeq) this.#remove(fromSeq, to);
    if (isRemoved(this.#ranges, seq)) return false;
    this.#summarySeqs.push(seq);
    this.#summaryPositions.push(fromSeq);
    this.#summaryAs.push(a);
    this.#summaryBs.push(b);
    return true;
  }

  /**
   * The survivors in view order: by where they stand, then by seq; messages before summaries
   * and each in the order added when both tie. O(n log n) in the survivors.
   */
  inViewOrder(): Survivor[] {
    const entries: (Survivor & { position: number })[] = [];
    for (let index = 0; index < this.#seqs.length; index += 1) {
      const seq = this.#seqs[index] as number;
      entries.push({
        position: seq,
        seq,
        a: this.#as[index] as number,
        b: this.#bs[index] as number,
      });
    }
    for (let index = 0; index < this.#summarySeqs.length; index += 1) {
      entries.push({
        position: this.#summaryPositions[index] as number,
        seq: this.#summarySeqs[index] as number,
        a: this.#summaryAs[index] as number,
        b: this.#summaryBs[index] as number,
      });
    }
    entries.sort((left, right) => left.position - right.position || left.seq - right.seq);
    return entries.map(({ seq, a, b }) => ({ seq, a, b }));
  }

  #remove(from: number, to: number): void {
    const hull = insertRange(this.#ranges, from, to);
    if (this.#inOrder) {
      const start = firstAtLeast(this.#seqs, hull[0]);
      const end = firstAtLeast(this.#seqs, hull[1], true);
      if (end > start) {
        for (let index = start; index < end; index += 1) this.#drop(this.#as, this.#bs, index);
        this.#seqs.splice(start, end - start);
        this.#as.splice(start, end - start);
        this.#bs.splice(start, end - start);
      }
    } else {
      this.#filter();
    }
    if (this.#summarySeqs.some((seq) => isRemoved(this.#ranges, seq))) this.#filterSummaries();
  }

  #drop(as: readonly number[], bs: readonly number[], index: number): void {
    this.#onDrop?.(as[index] as number, bs[index] as number);
  }

  #filter(): void {
    const seqs: number[] = [];
    const as: number[] = [];
    const bs: number[] = [];
    this.#seqs.forEach((seq, index) => {
      if (isRemoved(this.#ranges, seq)) {
        this.#drop(this.#as, this.#bs, index);
        return;
      }
      seqs.push(seq);
      as.push(this.#as[index] as number);
      bs.push(this.#bs[index] as number);
    });
    this.#seqs = seqs;
    this.#as = as;
    this.#bs = bs;
  }

  #filterSummaries(): void {
    const seqs: number[] = [];
    const positions: number[] = [];
    const as: number[] = [];
    const bs: number[] = [];
    this.#summarySeqs.forEach((seq, index) => {
      if (isRemoved(this.#ranges, seq)) {
        this.#drop(this.#summaryAs, this.#summaryBs, index);
        return;
      }
      seqs.push(seq);
      positions.push(this.#summaryPositions[index] as number);
      as.push(this.#summaryAs[index] as number);
      bs.push(this.#summaryBs[index] as number);
    });
    this.#summarySeqs = seqs;
    this.#summaryPositions = positions;
    this.#summaryAs = as;
    this.#summaryBs = bs;
  }
}

/**
 * Add `[from, to]` to the ranges, merging it with those it overlaps or touches (what sorting
 * and merging them all again would give); returns the merged range that now holds it, which
 * may also cover the gaps it closed.
 */
function insertRange(ranges: Ranges, from: number, to: number): [number, number] {
  // The first range that ends at or after from - 1 (ends are sorted too).
  let first = 0;
  let high = ranges.length;
  while (first < high) {
    const middle = (first + high) >>> 1;
    if ((ranges[middle] as [number, number])[1] + 1 < from) first = middle + 1;
    else high = middle;
  }
  let last = first - 1;
  while (last + 1 < ranges.length && (ranges[last + 1] as [number, number])[0] <= to + 1) {
    last += 1;
  }
  const merged: [number, number] = [from, to];
  if (last >= first) {
    merged[0] = Math.min(from, (ranges[first] as [number, number])[0]);
    merged[1] = Math.max(to, (ranges[last] as [number, number])[1]);
  }
  ranges.splice(first, last - first + 1, merged);
  return merged;
}

/** The index of the first seq ≥ `seq` (> `seq` when `after`) in a sorted list. */
function firstAtLeast(seqs: readonly number[], seq: number, after = false): number {
  let low = 0;
  let high = seqs.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const at = seqs[middle] as number;
    if (at < seq || (after && at === seq)) low = middle + 1;
    else high = middle;
  }
  return low;
}

function isRemoved(ranges: Ranges, seq: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const range = ranges[middle] as [number, number];
    if (seq < range[0]) high = middle - 1;
    else if (seq > range[1]) low = middle + 1;
    else return true;
  }
  return false;
}
