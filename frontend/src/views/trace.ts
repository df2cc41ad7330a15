// Trace: the timeline of CPU threads, GPU streams and counters of one span (src/trace/).
// URL parameters (absolute trace-time µs, so a link reopens the same window and selection,
// and other views can open the trace at an operator's or kernel's occurrence):
//   trace.start, trace.end — the visible window; trace.select — the selected event id.
import { fetchTracks } from "../api/trace";
import type { SpanRef } from "../api/types";
import { el, replaceChildren } from "../components/dom";
import { createErrorPanel } from "../components/error_panel";
import { loadUntilReady } from "../lib/retry";
import { injectTraceStyles } from "../trace/styles";
import { PARAM_END, PARAM_SELECT, PARAM_START, TraceViewer } from "../trace/viewer";
import type { ViewContext, ViewDefinition } from "./types";

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

function spanRefOf(ctx: ViewContext): SpanRef | null {
  const { run, worker, span } = ctx.selection;
  return run !== null && worker !== null && span !== null ? { run: run.name, worker: worker.name, span } : null;
}

function mount(host: HTMLElement, ctx: ViewContext): void {
  injectTraceStyles(host.ownerDocument);
  const ref = spanRefOf(ctx);
  if (ref === null) return; // the shell mounts span views only with a span
  const status = el("p", { className: "ps-trace-loading", testId: "trace-loading" }, "Loading the timeline…");
  host.appendChild(status);
  void loadUntilReady(
    (signal) => fetchTracks(ctx.api, ref, signal),
    {
      loading(progress) {
        status.textContent = progress !== null ? `The backend is loading the trace… ${Math.round(progress * 100)}%` : "The backend is loading the trace…";
      },
      ok(tracks) {
        replaceChildren(host);
        if (tracks.tracks.length === 0) {
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
          setParams: (patch) => ctx.setParams(patch),
        });
        ctx.signal.addEventListener("abort", () => viewer.destroy(), { once: true });
      },
      error(message) {
        replaceChildren(host, createErrorPanel("trace-error", "Cannot show the trace", message));
      },
    },
    ctx.signal,
  );
}

export const traceView: ViewDefinition = { id: "trace", label: "Trace", scope: "span", mount };
