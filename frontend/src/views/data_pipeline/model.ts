// The pure half of the Data pipeline page (no DOM): the figures of its step chart's legend.
import type { DataPipelineData } from "../../api/data_pipeline";

/** The chart's layers, by the step fields they draw. */
export type LegendKey = "data_wait" | "compute" | "other";

/** The legend's figures by layer: a hovered step's (`index`), else the means per step. */
export function legendValues(data: DataPipelineData, index: number | null): Record<LegendKey, number> {
  const step = index !== null ? data.steps[index] : undefined;
  const summary = data.summary;
  return step !== undefined
    ? { data_wait: step.data_wait, compute: step.compute, other: step.other }
    : { data_wait: summary.mean_data_wait, compute: summary.mean_compute, other: summary.mean_other };
}
