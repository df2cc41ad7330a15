// A stand-in canvas for renderer tests: records the calls (with the fill in effect), and a theme
// whose paints are easy to recognise.
import type { Theme } from "../src/trace/render/renderer";

/** Records canvas calls: enough of CanvasRenderingContext2D for the renderer. */
export class Recorder {
  fillStyle: string | CanvasGradient | CanvasPattern = "";
  strokeStyle: string | CanvasGradient | CanvasPattern = "";
  lineWidth = 1;
  font = "";
  textBaseline: CanvasTextBaseline = "alphabetic";
  textAlign: CanvasTextAlign = "start";
  globalAlpha = 1;
  readonly calls: { op: string; args: unknown[]; fill: unknown }[] = [];
  private record(op: string, args: unknown[]): void {
    this.calls.push({ op, args, fill: this.fillStyle });
  }
  save(): void { this.record("save", []); }
  restore(): void { this.record("restore", []); }
  beginPath(): void { this.record("beginPath", []); }
  closePath(): void { this.record("closePath", []); }
  rect(...args: number[]): void { this.record("rect", args); }
  fill(): void { this.record("fill", []); }
  stroke(): void { this.record("stroke", []); }
  fillRect(...args: number[]): void { this.record("fillRect", args); }
  strokeRect(...args: number[]): void { this.record("strokeRect", args); }
  fillText(text: string, x: number, y: number): void { this.record("fillText", [text, x, y]); }
  moveTo(...args: number[]): void { this.record("moveTo", args); }
  lineTo(...args: number[]): void { this.record("lineTo", args); }
  bezierCurveTo(...args: number[]): void { this.record("bezierCurveTo", args); }
  clip(): void { this.record("clip", []); }
  setTransform(): void { this.record("setTransform", []); }
  setLineDash(): void { this.record("setLineDash", []); }
}

export const THEME: Theme = {
  background: "#fff", headerBackground: "#f5f5f5", groupBackground: "#eee", axisBackground: "#f5f5f5",
  text: "#222", mutedText: "#666", border: "#ddd", grid: "#eee", accent: "#f57c00", sliceText: "#111",
  blockFill: "BLOCK", placeholderFill: "PLACEHOLDER", rangeFill: "rgba(0,0,0,0.1)", dimFill: "DIM", matchStroke: "#0277bd",
  flowStroke: "#333", labelFont: "11px sans-serif", headerFont: "12px sans-serif", groupFont: "bold 12px sans-serif",
  axisFont: "11px sans-serif",
};

