// How far from the hardware's peak: the efficiency figures the Operator and Kernel tables, the Roofline page and the
// Overview show, parsed once and formatted once, with their definitions (the column tips). The backend computes
// them (tb_plugin/views/quantities/efficiency.py); this module only reads and shows them. Pure: no DOM.

const DASH = "—";

/** Three significant digits, with k/M/G suffixes past 10,000: 0.00123, 1.23, 12.3, 123, 12.3k. */
export function formatFigure(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return DASH;
  const magnitude = Math.abs(value);
  if (magnitude === 0) return "0";
  if (magnitude >= 1e10) return `${(value / 1e9).toFixed(1)}G`;
  if (magnitude >= 1e7) return `${(value / 1e6).toFixed(1)}M`;
  if (magnitude >= 1e4) return `${(value / 1e3).toFixed(1)}k`;
  return Number(value.toPrecision(3)).toString();
}

/** FLOP/s as people read them: "312 TFLOP/s", "1.25 TFLOP/s", "850 GFLOP/s". */
export function formatFlopRate(flopsPerSecond: number | null): string {
  if (flopsPerSecond === null || !Number.isFinite(flopsPerSecond)) return DASH;
  const units: [number, string][] = [[1e15, "PFLOP/s"], [1e12, "TFLOP/s"], [1e9, "GFLOP/s"], [1e6, "MFLOP/s"]];
  for (const [scale, unit] of units) if (Math.abs(flopsPerSecond) >= scale) return `${formatFigure(flopsPerSecond / scale)} ${unit}`;
  return `${formatFigure(flopsPerSecond)} FLOP/s`;
}

/** Bytes per second, decimal units as vendors give bandwidth: "3.35 TB/s", "900 GB/s". */
export function formatByteRate(bytesPerSecond: number | null): string {
  if (bytesPerSecond === null || !Number.isFinite(bytesPerSecond)) return DASH;
  const units: [number, string][] = [[1e12, "TB/s"], [1e9, "GB/s"], [1e6, "MB/s"], [1e3, "kB/s"]];
  for (const [scale, unit] of units) if (Math.abs(bytesPerSecond) >= scale) return `${formatFigure(bytesPerSecond / scale)} ${unit}`;
  return `${formatFigure(bytesPerSecond)} B/s`;
}

export const EFFICIENCY_DEFINITIONS = {
  gflops:
    "GFLOP: floating-point operations (/ 1e9) of the calls that count their work, from their recorded shapes " +
    "(record_shapes=True): 2·M·N·K for a product, 2·(output elements)·(filter elements per output) for a " +
    "convolution, 2·B·H·N_q·N_kv·(d_qk + d_v) for attention (halved when causal), one per element for elementwise " +
    "work. A product reached through linear → matmul → mm counts once, at mm. Agrees with AMD TraceLens's model except " +
    "a convolution's bias (counted here), a convolution backward's gradients not asked for (not counted here), and " +
    "attention bytes (the dtype's size here).",
  bytes: "Data moved: bytes the counted calls read and write, each operand once (no cache effects).",
  tflopsPerS: "TFLOP/s: achieved FLOPs per second, FLOPs / measured time (device time of the work the calls launched; host time on CPU-only spans).",
  tbPerS: "TB/s: achieved bytes per second, data moved / measured time (1 TB = 1e12 bytes).",
  intensity: "Arithmetic intensity: FLOPs per byte moved. Left of the device's ridge point, work is bound by memory; right of it, by compute.",
  bound:
    "Bound: which roofline term is larger, compute (FLOPs / peak FLOP/s of the precision on matrix or vector units) or " +
    "memory (bytes / memory bandwidth), with the device's datasheet peaks (or the server's peaks file).",
  rooflineShare:
    "Share of roofline: roofline time / measured time, where roofline time is max(FLOPs / peak, bytes / bandwidth): " +
    "100% runs at the roof; 25% takes four times longer than the hardware allows.",
  mfu:
    "Model FLOPs utilization: the FLOPs of the matrix operators (products, convolutions, attention) of the step's " +
    "calls, each over the matrix peak of its precision on its device, / (step time × devices used). Elementwise, " +
    "normalization and reduction work is not counted.",
  lowRoofline: "Share of all device time spent in operator calls running below half their roofline.",
  categoryTime:
    "Device time per operator category: copies and memsets are memory copies, collective kernels communication, " +
    "other work takes the category of the operator that launched it (GEMM, convolution, attention...), else of the kernel's name.",
} as const;

