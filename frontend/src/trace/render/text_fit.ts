// Labels only where they fit: widths are measured once per string and remembered, and a
// long name is cut (with "…") at the longest prefix that fits, found by bisection.

export const ELLIPSIS = "…";
/** A cut label must keep at least this many characters to be worth drawing. */
const MIN_PREFIX = 3;

export class TextFitter {
  private readonly widths = new Map<string, number>();

  /**
   * @param measure width of a string in the current font (canvas measureText; a stub in tests)
   * @param capacity strings remembered before the cache starts over
   */
  constructor(
    private readonly measure: (text: string) => number,
    private readonly capacity = 20000,
  ) {}

  width(text: string): number {
    let width = this.widths.get(text);
    if (width === undefined) {
      if (this.widths.size >= this.capacity) this.widths.clear();
      width = this.measure(text);
      this.widths.set(text, width);
    }
    return width;
  }

  /** `text`, or its longest prefix + "…" that fits `maxWidth`, or null when nothing useful fits. */
  fit(text: string, maxWidth: number): string | null {
    if (maxWidth <= 0 || text.length === 0) return null;
    if (this.width(text) <= maxWidth) return text;
    if (text.length <= MIN_PREFIX) return null;
    // Bisection over prefix lengths: the longest prefix whose "prefix…" fits.
    let lo = MIN_PREFIX;
    let hi = text.length - 1;
    if (this.width(text.slice(0, lo) + ELLIPSIS) > maxWidth) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.width(text.slice(0, mid) + ELLIPSIS) <= maxWidth) lo = mid;
      else hi = mid - 1;
    }
    return text.slice(0, lo) + ELLIPSIS;
  }

  /** Forget all widths (after a font change). */
  reset(): void {
    this.widths.clear();
  }

  get size(): number {
    return this.widths.size;
  }
}
