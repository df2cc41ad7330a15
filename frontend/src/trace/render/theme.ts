// The canvas theme, read from the shell's CSS variables (so it follows light and dark), with
// the hatch patterns for busy blocks and loading placeholders.
import type { Theme } from "./renderer";

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const value = style.getPropertyValue(name).trim();
  return value === "" ? fallback : value;
}

/** A small tile of diagonal stripes, repeated as a fill. */
function hatch(doc: Document, background: string, stripe: string, size: number): CanvasPattern | string {
  const tile = doc.createElement("canvas");
  tile.width = size;
  tile.height = size;
  const ctx = tile.getContext("2d");
  if (ctx === null) return background;
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, size, size);
  ctx.strokeStyle = stripe;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  // Two segments so the stripes join across tile edges.
  ctx.moveTo(0, size);
  ctx.lineTo(size, 0);
  ctx.moveTo(-size / 2, size / 2);
  ctx.lineTo(size / 2, -size / 2);
  ctx.moveTo(size / 2, size * 1.5);
  ctx.lineTo(size * 1.5, size / 2);
  ctx.stroke();
  return ctx.createPattern(tile, "repeat") ?? background;
}

export function readTheme(doc: Document): Theme {
  const style = doc.defaultView?.getComputedStyle(doc.documentElement) ?? null;
  const get = (name: string, fallback: string): string => (style === null ? fallback : cssVar(style, name, fallback));
  const dark = doc.documentElement.dataset["theme"] === "dark";
  const background = get("--ps-bg", "#ffffff");
  const raised = get("--ps-bg-raised", "#f5f5f5");
  const hover = get("--ps-bg-hover", "#eeeeee");
  const text = get("--ps-fg", "#212121");
  const muted = get("--ps-fg-muted", "#616161");
  const border = get("--ps-border", "#e0e0e0");
  const accent = get("--ps-accent", "#f57c00");
  const font = get("--ps-font", "system-ui, sans-serif");
  return {
    background,
    headerBackground: raised,
    groupBackground: hover,
    axisBackground: raised,
    text,
    mutedText: muted,
    border,
    grid: dark ? "rgba(255,255,255,0.06)" : "rgba(0,0,0,0.06)",
    accent,
    sliceText: "#1a1a1a",
    blockFill: hatch(doc, dark ? "#5a5a5a" : "#b8b8b8", dark ? "#7a7a7a" : "#8e8e8e", 6),
    placeholderFill: hatch(doc, dark ? "#383838" : "#f3f3f3", dark ? "#444444" : "#e4e4e4", 10),
    rangeFill: dark ? "rgba(255,152,0,0.14)" : "rgba(245,124,0,0.12)",
    dimFill: dark ? "#3c3c3c" : "#e6e6e6",
    matchStroke: dark ? "#80d8ff" : "#0277bd",
    flowStroke: dark ? "#e0e0e0" : "#37474f",
    labelFont: `11px ${font}`,
    headerFont: `12px ${font}`,
    groupFont: `bold 12px ${font}`,
    axisFont: `11px ${font}`,
  };
}
