// Analyses page, annotations: the user's own record_function ranges ("data/*", "train/*") and their copies on
// the device, as a table like the operator table: calls, host time, device time.
import { ANALYSIS_ROUTES, type AnnotationRow, type AnnotationsData } from "../../api/analyses";
import { formatCount } from "../../lib/format";
import {
  analysisSection,
  microsColumn,
  sectionTable,
  showInTrace,
  SHOW_IN_TRACE_HINT,
  type SectionContext,
} from "./section_frame";

const DEVICE_COPY =
  "Device time of the range's copies on the device (gpu_user_annotation): from the first to the last device work of " +
  "the range, as the profiler draws them (HTA's user annotation breakdown sums the same).";
const DEVICE_WORK =
  "Device work launched while the range is open: the kernels, copies and memsets whose launch starts inside it, on " +
  "any thread of its process (autograd launches the backward pass from its own thread).";
const HOW =
  "record_function / user_annotation ranges that start in the Overview's steps, by name (the steps' own ranges left " +
  `out): calls and host time (the ranges' durations). ${DEVICE_COPY} ${DEVICE_WORK}`;

function render(data: AnnotationsData, ctx: SectionContext, signal: AbortSignal): HTMLElement[] {
  const columns = [
    { id: "name", label: "Annotation", width: 200, grow: 3, firstDirection: "asc" as const, sortValue: (r: AnnotationRow) => r.name,
      cellTip: (r: AnnotationRow) => r.name,
      text: (r: AnnotationRow) => r.name },
    { id: "calls", label: "Calls", width: 70, align: "right" as const, sortValue: (r: AnnotationRow) => r.calls,
      text: (r: AnnotationRow) => formatCount(r.calls) },
    microsColumn<AnnotationRow>("host_total", "Host total", "Sum of the ranges' durations on the host.", (r) => r.host_total),
    microsColumn<AnnotationRow>("host_mean", "Host mean", "Mean duration of a range on the host.", (r) => r.host_mean),
    microsColumn<AnnotationRow>("host_max", "Host max", "Longest range on the host.", (r) => r.host_max),
  ];
  if (data.has_device_copies) {
    columns.push(microsColumn<AnnotationRow>("device_total", "Device time", DEVICE_COPY, (r) => r.device_total));
  }
  if (data.has_device) {
    columns.push(microsColumn<AnnotationRow>("device_work", "Device work", DEVICE_WORK, (r) => r.device_work));
  }
  return [
    sectionTable<AnnotationRow>(
      ctx,
      {
        title: "Annotations",
        tip: `${HOW} ${SHOW_IN_TRACE_HINT}`,
        columns,
        rows: data.rows,
        rowKey: (r) => r.name,
        filterText: (r) => r.name,
        sort: { column: "host_total", direction: "desc" },
        route: ANALYSIS_ROUTES.annotations,
        testId: "analysis-annotations-table",
        onActivate: (r) => showInTrace(ctx, r.example_start, r.example_end, r.example_id),
      },
      signal,
    ),
  ];
}

export const annotationsSection = analysisSection({
  id: "annotations",
  title: "Annotations",
  how: HOW,
  route: ANALYSIS_ROUTES.annotations,
  what: "annotations",
  render,
});
