// Analyses page, queue length: how much launched work waits on each stream. The series itself is a counter
// track of the trace viewer (one per stream, beside the device's lanes); here, per stream over the steps, the
// deepest queue, the mean length and the time with an empty queue.
import { ANALYSIS_ROUTES, type QueueLengthData, type QueueStream } from "../../api/analyses";
import { el } from "../../components/dom";
import { formatCount, formatPercent } from "../../lib/format";
import { formatFixed } from "../../lib/metric_format";
import { analysisSection, microsColumn, sectionTable, type SectionContext } from "./section_frame";

const HOW =
  "The queue of a stream grows by one when a runtime call that launches work on it begins (a cudaGraphLaunch by all " +
  "kernels of its graph) and shrinks by one when that work starts on the device, as HTA's queue length time series. " +
  "Over the Overview's steps: the deepest queue, the mean length weighted by time, and the time with an empty queue " +
  "(nothing launched is waiting: the stream runs its last work or waits for the host). A queue that stays empty " +
  "means launch-bound work; a deep queue, a device that is behind the host. The series is the stream's “queue” " +
  "counter track in the Trace view.";

function render(data: QueueLengthData, ctx: SectionContext, signal: AbortSignal): HTMLElement[] {
  const table = sectionTable<QueueStream>(
    ctx,
    {
      title: "Streams",
      tip: HOW,
      columns: [
        { id: "stream", label: "Stream", width: 170, grow: 2, firstDirection: "asc", sortValue: (r) => r.stream, text: (r) => r.stream },
        { id: "max", label: "Deepest", tip: "The longest queue inside the steps.", width: 80, align: "right", sortValue: (r) => r.max, text: (r) => formatCount(r.max) },
        { id: "mean", label: "Mean", tip: "Queue length weighted by the time it lasted, over the steps.", width: 80, align: "right",
          sortValue: (r) => r.mean, text: (r) => formatFixed(r.mean, 2) },
        microsColumn("empty", "Empty", "Time inside the steps with nothing waiting on the stream.", (r) => r.empty),
        { id: "empty_share", label: "Empty share", tip: "Time with an empty queue / the steps' time.", width: 96, align: "right",
          sortValue: (r) => r.empty_share, text: (r) => formatPercent(r.empty_share) },
      ],
      rows: data.streams,
      rowKey: (r) => r.counter,
      filterText: (r) => r.stream,
      sort: { column: "max", direction: "desc" },
      route: ANALYSIS_ROUTES.queues,
      testId: "analysis-queues-streams",
    },
    signal,
  );
  const open = el("button", { className: "ps-button", testId: "analysis-queues-open-trace", attrs: { type: "button" } }, "Open the queue tracks in the Trace view");
  open.addEventListener("click", () => ctx.navigate("trace", {}));
  return [table, el("p", { className: "ps-note" }, "Each stream's queue is a counter track of the Trace view, named “… queue”. ", open)];
}

export const queuesSection = analysisSection({
  id: "queues",
  title: "Queue length",
  how: HOW,
  route: ANALYSIS_ROUTES.queues,
  what: "queue length",
  render,
});
