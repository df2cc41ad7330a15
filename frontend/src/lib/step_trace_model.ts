// What the Step trace view draws, from the parsed `steptrace` answer. Pure (no DOM).
import type { PhaseValues, StepPhase, StepTraceData, StepTraceRow } from "../api/step_trace";
import type { ChartLayer } from "./chart_data";

/** A chart layer: one of the phases, or forward + backward where only their sum is known. */
export type StepLayer = StepPhase | "fp_and_bp";

export interface PhaseInfo {
  readonly label: string;
  readonly color: string;
  /** Tooltip: what the phase is and how it is measured. */
  readonly definition: string;
}

export const PHASE_INFO: Readonly<Record<StepLayer, PhaseInfo>> = {
  gap: {
    label: "Iteration gap",
    color: "#f28e2b",
    definition:
      "From the start of the step to the start of forward: waiting for data (data loading is part of it) and " +
      "anything done before the first forward operator.",
  },
  forward: {
    label: "Forward",
    color: "#4e79a7",
    definition:
      "From the forward start (the first operator after data loading, Paddle's Forward events, or the FP point) " +
      "to the start of backward.",
  },
  backward: {
    label: "Backward",
    color: "#59a14f",
    definition:
      "Backward ranges: autograd evaluate_function ranges and autograd-thread operators, Paddle's Backward events, " +
      "or up to the end of the BP point.",
  },
  fp_and_bp: {
    label: "Forward + backward",
    color: "#76b7b2",
    definition: "Forward and backward together, where only their sum is known (MindSpore's step trace file).",
  },
  optimizer: {
    label: "Optimizer",
    color: "#b07aa1",
    definition: "Optimizer.step / Optimizer.zero_grad ranges (Paddle: Optimization events) and the device work they launched.",
  },
  communication: {
    label: "Communication",
    color: "#e15759",
    definition: "Collectives (NCCL, Gloo, c10d) while nothing computes: communication that is not overlapped.",
  },
  tail: {
    label: "Tail",
    color: "#edc948",
    definition: "From the end of the last backward or optimizer work to the end of the step.",
  },
  other: {
    label: "Other",
    color: "#bab0ac",
    definition: "Time of the step no phase covers, and the time of phases that could not be derived.",
  },
};

/** Bottom-first stacking order (the step's own time order, with other on top). */
const LAYER_ORDER: readonly StepLayer[] = ["gap", "forward", "backward", "fp_and_bp", "optimizer", "communication", "tail", "other"];

/** A step's value for a layer; null when unknown. `fp_and_bp` counts only where forward and backward are both unknown. */
export function layerValue(phases: PhaseValues, fpAndBp: number | null, layer: StepLayer): number | null {
  if (layer !== "fp_and_bp") return phases[layer];
  return phases.forward === null && phases.backward === null ? fpAndBp : null;
}

/** The layers some step has a value for, in stacking order. */
export function visibleLayers(data: StepTraceData): StepLayer[] {
  return LAYER_ORDER.filter((layer) =>
    data.steps.some((step) => {
      const value = layerValue(step.phases, step.fp_and_bp, layer);
      return value !== null && (value > 0 || layer !== "fp_and_bp");
    }),
  );
}

export function chartLayers(data: StepTraceData, layers: readonly StepLayer[]): ChartLayer[] {
  return layers.map((layer) => ({
    label: PHASE_INFO[layer].label,
    color: PHASE_INFO[layer].color,
    values: data.steps.map((step) => layerValue(step.phases, step.fp_and_bp, layer) ?? 0),
  }));
}

/** The step's time the layers account for: equal to its duration when the answer is consistent. */
export function accountedTime(step: StepTraceRow): number {
  return LAYER_ORDER.reduce((sum, layer) => sum + (layerValue(step.phases, step.fp_and_bp, layer) ?? 0), 0);
}

/** Mean of a layer over the steps where it is known (the backend's averages, and fp_and_bp by the same rule). */
export function averageOf(data: StepTraceData, layer: StepLayer): number | null {
  if (layer !== "fp_and_bp") return data.average.phases[layer];
  const known = data.steps.map((step) => layerValue(step.phases, step.fp_and_bp, layer)).filter((v): v is number => v !== null);
  return known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : null;
}

/** The phase that takes the largest share of the mean step (the headline), or null without steps. */
export function dominantPhase(data: StepTraceData): { layer: StepLayer; share: number } | null {
  const mean = data.average.dur;
  if (mean === null || mean <= 0) return null;
  let best: { layer: StepLayer; share: number } | null = null;
  for (const layer of LAYER_ORDER) {
    if (layer === "other") continue; // "other" is what no marker explains: not a finding
    const value = averageOf(data, layer);
    if (value !== null && value > 0 && (best === null || value / mean > best.share)) best = { layer, share: value / mean };
  }
  return best;
}

/** One line per source of a point, for the "Markers used" list. */
export function markerLines(data: StepTraceData): { label: string; value: string }[] {
  const m = data.markers;
  const fromFile = data.source === "mindspore_step_trace";
  const absent = fromFile ? "not in the step trace file" : "not found";
  const lines: { label: string; value: string }[] = [
    { label: "Steps", value: m.steps ?? "—" },
    { label: "Forward start", value: m.forward_start ?? absent },
    { label: "Backward", value: m.backward ?? absent },
    { label: "Optimizer", value: m.optimizer ?? absent },
    { label: "Data loading (host)", value: m.dataloader ?? (fromFile ? absent : "none") },
    { label: "Communication", value: m.communication ?? (fromFile ? absent : "no collectives") },
  ];
  if (m.time_base !== undefined && m.time_base !== null) { // absent for MindSpore's step trace file
    lines.push({ label: "Measured on", value: m.time_base === "device" ? "the device work the ranges launched" : "host ranges" });
  }
  return lines;
}

/** The URL value of a point: trimmed, empty when unset. */
export function pointParam(value: string | null): string {
  return (value ?? "").trim();
}
