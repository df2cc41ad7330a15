// The efficiency fields of the contract's rows (operators, kernels, roofline points) as the page reads them: the
// backend computes them (tb_plugin/views/quantities/efficiency.py); lib/efficiency.ts formats and defines them.
import type { Schema } from "./schema";

export type Bound = NonNullable<Schema<"Efficiency">["bound"]>;

/** The efficiency columns of one row (null where the row has no counted calls or no roofline). */
export interface Efficiency {
  /** FLOPs / 1e9 of the counted calls. */
  readonly gflops: number | null;
  readonly bytes: number | null;
  readonly tflopsPerS: number | null;
  readonly tbPerS: number | null;
  /** FLOPs per byte. */
  readonly intensity: number | null;
  readonly bound: Bound | null;
  /** Roofline time / measured time, 0..1 (1 = at the roof). */
  readonly rooflineShare: number | null;
  /** µs. */
  readonly rooflineTime: number | null;
  /** Why the row has no figures ("" when it has them). */
  readonly perfReason: string;
  /** Why some counted calls have no roofline (no peak for the device or precision). */
  readonly rooflineReason: string;
}

/** The efficiency fields a row of the contract carries (operators, kernels, roofline points). */
export type EfficiencyFields = { readonly [K in keyof Schema<"Efficiency">]?: Schema<"Efficiency">[K] | undefined } & {
  readonly perf_reason?: string | undefined;
  readonly roofline_reason?: string | null | undefined;
};

/** A row's efficiency fields as the columns read them. */
export function efficiencyOf(row: EfficiencyFields): Efficiency {
  return {
    gflops: row.gflops ?? null,
    bytes: row.bytes ?? null,
    tflopsPerS: row.tflops_per_s ?? null,
    tbPerS: row.tb_per_s ?? null,
    intensity: row.intensity ?? null,
    bound: row.bound ?? null,
    rooflineShare: row.roofline_share ?? null,
    rooflineTime: row.roofline_time ?? null,
    perfReason: row.perf_reason ?? "",
    rooflineReason: row.roofline_reason ?? "",
  };
}
