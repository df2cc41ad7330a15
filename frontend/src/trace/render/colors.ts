// Stable colours: a slice's colour depends on its name only, so the same operator or kernel
// looks the same in every window, tile and session. Numbers are ignored so that
// "ProfilerStep#3" and "ProfilerStep#4" share a colour.

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The part of a name that picks its colour: digits removed. */
export function colorKey(name: string): string {
  return name.replace(/[0-9]+/g, "");
}

/** A fill colour for a name: hue from the hash, in a band of saturation and lightness where black text reads well. */
export function colorForName(name: string): string {
  const hash = fnv1a(colorKey(name));
  const hue = hash % 360;
  const saturation = 45 + ((hash >>> 9) % 25);
  const lightness = 62 + ((hash >>> 17) % 14);
  return `hsl(${hue} ${saturation}% ${lightness}%)`;
}

/** Remembers colours of names seen (bounded, so a trace of unique names cannot grow it forever). */
export class ColorCache {
  private readonly colors = new Map<string, string>();

  constructor(private readonly capacity = 20000) {}

  get(name: string): string {
    let color = this.colors.get(name);
    if (color === undefined) {
      if (this.colors.size >= this.capacity) this.colors.clear();
      color = colorForName(name);
      this.colors.set(name, color);
    }
    return color;
  }
}
