// Analyses page, frequent kernel sequences: the same operator launching the same kernels in the same order,
// again and again, the most device time first: candidates for fusion or for a CUDA graph.
import { ANALYSIS_ROUTES, type KernelSequence, type KernelSequencesData } from "../../api/analyses";
import { formatCount, formatPercent } from "../../lib/format";
import { sequenceText } from "./model";
import {
  analysisSection,
  microsColumn,
  sectionTable,
  showInTrace,
  SHOW_IN_TRACE_HINT,
  type SectionContext,
} from "./section_frame";

const HOW =
  "Each outermost operator in the Overview's steps with the device work launched by it and the operators nested in " +
  "it, in the order the work started; equal sequences of at least 3 activities that occur at least twice are grouped, " +
  "the most device time first (as HTA's frequent CUDA kernel sequences, which ranks by occurrences). Device time " +
  "is the work's durations, CPU time the operators' durations.";

function render(data: KernelSequencesData, ctx: SectionContext, signal: AbortSignal): HTMLElement[] {
  return [
    sectionTable<KernelSequence>(
      ctx,
      {
        title: "Repeated sequences",
        tip: `${HOW} ${SHOW_IN_TRACE_HINT}`,
        columns: [
          { id: "operator", label: "Operator", width: 170, grow: 1, firstDirection: "asc", sortValue: (r) => r.operator, text: (r) => r.operator,
            cellTip: (r) => r.operator },
          { id: "kernels", label: "Kernels", width: 260, grow: 4, sortValue: (r) => r.length, text: sequenceText,
            cellTip: (r) => r.kernels.join("\n") },
          { id: "count", label: "Occurrences", width: 96, align: "right", sortValue: (r) => r.count, text: (r) => formatCount(r.count) },
          microsColumn("device_total", "Device total", "The sequence's device work over all its occurrences.", (r) => r.device_total),
          microsColumn("device_mean", "Per occurrence", "Device time of one occurrence, on average.", (r) => r.device_mean),
          microsColumn("cpu_total", "Operator CPU", "The launching operators' durations on the host.", (r) => r.cpu_total),
          { id: "device_share", label: "Share", tip: "Share of all device work launched by operators in the steps.", width: 72,
            align: "right", sortValue: (r) => r.device_share, text: (r) => formatPercent(r.device_share) },
        ],
        rows: data.sequences,
        rowKey: (r) => `${r.operator}\u0000${r.kernels.join("\u0000")}`,
        filterText: (r) => `${r.operator} ${r.kernels.join(" ")}`,
        sort: { column: "device_total", direction: "desc" },
        route: ANALYSIS_ROUTES.sequences,
        testId: "analysis-sequences-table",
        onActivate: (r) => showInTrace(ctx, r.example_start, r.example_end, r.example_id),
      },
      signal,
    ),
  ];
}

export const sequencesSection = analysisSection({
  id: "sequences",
  title: "Frequent kernel sequences",
  how: HOW,
  route: ANALYSIS_ROUTES.sequences,
  what: "kernel sequences",
  render,
});
