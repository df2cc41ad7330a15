// The Distributed page's choice of span: the same index of every worker's spans (one window of the whole job),
// each choice saying when it ran; with the run's name and its number of workers beside it.
import type { RunInfo } from "../../api/runs";
import { el } from "../../components/dom";
import { formatCount } from "../../lib/format";
import { parseSpanIndex, spanIndexCount, spanIndexLabels } from "../../lib/distributed_model";

/** The controls; `onChange` gets the span index picked. */
export function spanPickerControls(run: RunInfo, spanIndex: number, onChange: (spanIndex: number) => void): HTMLElement {
  const spanCount = spanIndexCount(run);
  const spanPicker = el("select", { className: "ps-select", testId: "distributed-span-index", attrs: { "aria-label": "Span index" } });
  spanIndexLabels(run).forEach((label, index) => spanPicker.appendChild(new Option(label, String(index))));
  spanPicker.value = String(spanIndex);
  spanPicker.disabled = spanCount < 2;
  spanPicker.addEventListener("change", () => onChange(parseSpanIndex(spanPicker.value, spanCount)));
  return el(
    "div",
    { className: "ps-controls" },
    el("label", {}, "Span of every worker", spanPicker),
    el("span", { className: "ps-note" }, `Run ${run.name}: ${formatCount(run.workers.length)} worker(s), one span of each compared.`),
  );
}
