// Trace: the timeline of CPU threads, GPU streams and counters of one span (src/trace/).
// URL parameters (absolute trace-time µs, so a link reopens the same window and selection,
// and other views can open the trace at an operator's or kernel's occurrence):
//   trace.start, trace.end — the visible window; trace.select — the selected event id;
//   trace.pinned — the tracks pinned to the top (a JSON list of track ids);
//   trace.ranks — step|time: the run's workers side by side instead (src/trace/ranks/), trace.rank_step its step.
import { fetchTracks } from "../../api/trace";
import { el, replaceChildren } from "../../components/dom";
import { loadInto, type LoadStage } from "../../components/loader";
import { spanRefOf } from "../../components/view_parts";
import { injectTraceStyles } from "../../trace/styles";
import { PARAM_END, PARAM_PINNED, PARAM_SELECT, PARAM_START } from "../../trace/url_params";
import { TraceViewer } from "../../trace/viewer";
import { mountRanksMode, ranksSwitch } from "../../trace/ranks/ranks_mode";
import type { ViewContext, ViewDefinition } from "../types";

/** A number from a URL parameter, or null when absent or not a finite number. */
export function numberParam(value: string | null): number | null {
  if (value === null || value.trim() === "") return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

/** An event id from a URL parameter: a non-negative integer, else null. */
export function eventIdParam(value: string | null): number | null {
  const number = numberParam(value);
  return number !== null && Number.isInteger(number) && number >= 0 ? number : null;
}

/** The timeline's own wording: first the request, then the backend's progress while it reads the trace. */
function traceLoadingNote(stage: LoadStage): HTMLElement {
  const text =
    stage.kind === "requested"
      ? "Loading the timeline…"
      : stage.progress !== null
        ? `The backend is loading the trace… ${Math.round(stage.progress * 100)}%`
        : "The backend is loading the trace…";
  return el("p", { className: "ps-trace-loading", testId: "trace-loading" }, text);
}

function mount(host: HTMLElement, ctx: ViewContext): void {
  injectTraceStyles(host.ownerDocument);
  const ref = spanRefOf(ctx.selection);
  if (ref === null) return; // the shell mounts span views only with a span
  if (mountRanksMode(host, ctx)) return;
  void loadInto(
    {
      host,
      fetch: (signal) => fetchTracks(ctx.api, ref, signal),
      what: "the timeline",
      testIdPrefix: "trace",
      errorTitle: "Cannot show the trace",
      note: traceLoadingNote,
      render(tracks, signal) {
        const ranks = ranksSwitch(ctx);
        replaceChildren(host);
        if (tracks.tracks.length === 0) {
          if (ranks !== null) host.appendChild(el("div", { className: "ps-trace-toolbar" }, ranks));
          host.appendChild(el("p", { className: "ps-trace-loading", testId: "trace-empty" }, "This span has no slices or counters to show."));
          return;
        }
        const viewer = new TraceViewer(host, {
          api: ctx.api,
          ref,
          tracks,
          initialStart: numberParam(ctx.param(PARAM_START)),
          initialEnd: numberParam(ctx.param(PARAM_END)),
          initialSelect: eventIdParam(ctx.param(PARAM_SELECT)),
          initialPinned: ctx.param(PARAM_PINNED),
          setParams: (patch) => ctx.setParams(patch),
          ...(ranks !== null ? { toolbarButtons: [ranks] } : {}),
        });
        signal.addEventListener("abort", () => viewer.destroy(), { once: true });
      },
    },
    ctx.signal,
  );
}

export const traceView: ViewDefinition = { id: "trace", label: "Trace", scope: "span", mount };
