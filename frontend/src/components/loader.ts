// Loads one analysis answer into a host element: a loading note while the request runs and
// while the backend still prepares the span (202, with progress), the error panel when it
// fails, the view's own rendering when it succeeds. Views that load again (another grouping,
// another pair) use a HostLoader: a new load aborts the previous one, so a late answer of a
// superseded load never reaches the page.
import type { ApiResult } from "../api/types";
import { loadUntilReady, type RetryOptions } from "../lib/retry";
import { replaceChildren } from "./dom";
import { createErrorPanel } from "./error_panel";
import { loadingNote } from "./view_parts";

/** Where a load stands when its note is drawn: just asked, or told by the backend to wait. */
export type LoadStage = { readonly kind: "requested" } | { readonly kind: "waiting"; readonly progress: number | null };

/** The `data-state` a load writes on `HostLoad.stateOn`, for tests that wait on it. */
export type LoadState = "loading" | "error" | "ready";

export interface HostLoad<T> {
  /** Shows the loading note and the error panel; `render` usually fills it too. */
  readonly host: HTMLElement;
  readonly fetch: (signal: AbortSignal) => Promise<ApiResult<T>>;
  /** The note's subject: "the kernels" gives "Loading the kernels… 40%". */
  readonly what: string;
  /** The subject while the backend answers 202, when it differs ("both spans"); `what` otherwise. */
  readonly waitingFor?: string;
  /** `<prefix>-loading` on the note, `<prefix>-error` on the error panel. */
  readonly testIdPrefix: string;
  readonly errorTitle: string;
  /** Draws the answer. `signal` aborts when this load is superseded or the view goes away. */
  readonly render: (data: T, signal: AbortSignal) => void;
  /** A view's own note instead of the standard one (the trace view has its own wording and style). */
  readonly note?: (stage: LoadStage) => HTMLElement;
  /** False when the host already shows the first note (built with the page). Default true. */
  readonly noteAtStart?: boolean;
  /** An element whose `data-state` follows the load: "loading", then "error" or "ready" (set just before `render`). */
  readonly stateOn?: HTMLElement;
  /** Poll timing; the defaults of `loadUntilReady` unless a test replaces them. */
  readonly retry?: RetryOptions;
}

function standardNote<T>(load: HostLoad<T>, stage: LoadStage): HTMLElement {
  const what = stage.kind === "waiting" ? (load.waitingFor ?? load.what) : load.what;
  return loadingNote(what, stage.kind === "waiting" ? stage.progress : null, `${load.testIdPrefix}-loading`);
}

/** Runs one load until it renders, fails, or `signal` aborts (then nothing more is drawn). */
export function loadInto<T>(load: HostLoad<T>, signal: AbortSignal): Promise<void> {
  const note = (stage: LoadStage): HTMLElement => (load.note !== undefined ? load.note(stage) : standardNote(load, stage));
  const setState = (state: LoadState): void => {
    if (load.stateOn !== undefined) load.stateOn.dataset["state"] = state;
  };
  setState("loading");
  if (load.noteAtStart !== false) replaceChildren(load.host, note({ kind: "requested" }));
  return loadUntilReady(
    load.fetch,
    {
      loading: (progress) => replaceChildren(load.host, note({ kind: "waiting", progress })),
      error: (message) => {
        setState("error");
        replaceChildren(load.host, createErrorPanel(`${load.testIdPrefix}-error`, load.errorTitle, message));
      },
      ok: (data) => {
        setState("ready");
        load.render(data, signal);
      },
    },
    signal,
    load.retry,
  );
}

/** A signal per request where each new request cancels the one before; all end with `parent`. */
export interface SignalSlot {
  /** Aborts the current signal and returns a fresh one. */
  next(): AbortSignal;
  /** Aborts the current signal without starting another. */
  clear(): void;
}

export function createSignalSlot(parent: AbortSignal): SignalSlot {
  let current: AbortController | null = null;
  let detach: (() => void) | null = null;

  function clear(): void {
    detach?.();
    detach = null;
    current?.abort();
    current = null;
  }

  return {
    next() {
      clear();
      const controller = new AbortController();
      current = controller;
      if (parent.aborted) {
        controller.abort();
        return controller.signal;
      }
      const abort = (): void => controller.abort();
      parent.addEventListener("abort", abort, { once: true });
      // Superseded requests let go of the parent, so reloading many times does not pile up listeners.
      detach = () => parent.removeEventListener("abort", abort);
      return controller.signal;
    },
    clear,
  };
}

/** Loads into hosts one at a time: starting a load supersedes the previous one. */
export interface HostLoader {
  load<T>(load: HostLoad<T>): Promise<void>;
  /** Aborts the running load, if any. */
  cancel(): void;
}

export function createHostLoader(parent: AbortSignal): HostLoader {
  const slot = createSignalSlot(parent);
  return {
    load: (load) => loadInto(load, slot.next()),
    cancel: () => slot.clear(),
  };
}
