// The shell: toolbar with run/worker/span pickers, view tabs, loading bar, run list and the
// active view. It polls the run list, resolves the selection against it, keeps the selection
// in the URL, and mounts the active view whenever what it shows changes.
import { ApiClient } from "./api/client";
import { spanFacts, type RunInfo, type RunsResponse } from "./api/runs";
import { el, replaceChildren } from "./components/dom";
import { createErrorPanel } from "./components/error_panel";
import { createLoadingBar, type LoadingBar } from "./components/loading_bar";
import { createPicker, type Picker } from "./components/picker";
import { createRunList, createSpanNotes, workerLabel, type RunList, type SpanNotes } from "./components/run_list";
import { createTabs, type Tabs } from "./components/tabs";
import {
  lookingForRunsState,
  noRunsState,
  runLoadingState,
  runWithoutSpansState,
  type NoRunsDetails,
} from "./components/empty_state";
import { formatPercent } from "./lib/format";
import { spanOptionLabel, spanOptionTitle } from "./lib/span_names";
import { resolveSelection, type Selection } from "./state/selection";
import { EMPTY_URL_STATE, sameUrlState, type UrlState, type ViewId } from "./state/url_state";
import type { UrlSync } from "./state/url_sync";
import { VIEWS, viewById } from "./views/registry";
import type { ViewContext, ViewDefinition } from "./views/types";

/** How often the run list is polled: faster while a run is loading. */
const POLL_MS_IDLE = 5000;
const POLL_MS_LOADING = 1500;
const POLL_MS_AFTER_ERROR = 5000;

interface MountedView {
  readonly key: string;
  readonly controller: AbortController;
}

export class ProfscopeApp {
  readonly root: HTMLElement;
  private runs: readonly RunInfo[] | null = null;
  /** False while the backend is still on its first scan of the logdir. */
  private scanned = true;
  /** Why the last poll of the run list failed; null when it worked. */
  private runsError: string | null = null;
  /** What the last scan skipped and looked for (the empty page shows both, the run list what was skipped). */
  private noRunsDetails: NoRunsDetails = {};
  private state: UrlState;
  private selection: Selection = { run: null, worker: null, span: null, spanIndex: -1 };
  /** Bumped when the URL changes from outside, so the view remounts with the new parameters. */
  private externalRevision = 0;
  private mounted: MountedView | null = null;
  private pollTimer: number | undefined;
  private pollInFlight = false;
  private stopped = false;

  private readonly runPicker: Picker;
  private readonly workerPicker: Picker;
  private readonly spanPicker: Picker;
  private readonly runMeta = el("span", { className: "ps-run-meta", testId: "run-meta" });
  /** What could not be derived from the selected span, beside the run's framework. */
  private readonly spanNotes: SpanNotes;
  private readonly tabs: Tabs<ViewId>;
  private readonly loadingBar: LoadingBar = createLoadingBar();
  private readonly banner = el("div", { className: "ps-banner", hidden: true });
  private readonly runList: RunList;
  private readonly main = el("main", { className: "ps-main", testId: "view-host" });

  constructor(
    private readonly api: ApiClient,
    private readonly urlSync: UrlSync,
    private readonly win: Window,
  ) {
    this.state = urlSync.read() ?? EMPTY_URL_STATE;
    this.runPicker = createPicker("Run", "run-picker", (run) => this.select({ run, worker: null, span: null }));
    this.workerPicker = createPicker("Worker", "worker-picker", (worker) => this.select({ worker, span: null }));
    this.spanPicker = createPicker("Span", "span-picker", (span) => this.select({ span }));
    this.tabs = createTabs(VIEWS, (view) => this.update({ ...this.state, view }));
    this.runList = createRunList((run) => this.select({ run, worker: null, span: null }));
    this.spanNotes = createSpanNotes(api);
    this.root = el(
      "div",
      { className: "ps-app", testId: "profscope-app" },
      el(
        "header",
        { className: "ps-toolbar" },
        this.runPicker.root,
        this.workerPicker.root,
        this.spanPicker.root,
        this.runMeta,
        this.spanNotes.root,
      ),
      this.tabs.root,
      this.loadingBar.root,
      this.banner,
      el("div", { className: "ps-body" }, this.runList.root, this.main),
    );
  }

  start(): void {
    this.urlSync.listen((state) => {
      if (sameUrlState(state, this.state)) return;
      this.externalRevision += 1;
      this.update(state);
    });
    this.render();
    void this.refreshRuns();
  }

  stop(): void {
    this.stopped = true;
    this.win.clearTimeout(this.pollTimer);
    this.mounted?.controller.abort();
    this.mounted = null;
  }

  /** Fetches the run list now (TensorBoard's reload button calls this too). */
  async refreshRuns(): Promise<void> {
    if (this.pollInFlight || this.stopped) return;
    this.pollInFlight = true;
    this.win.clearTimeout(this.pollTimer);
    let delay = POLL_MS_IDLE;
    try {
      const result = await this.api.runs();
      if (result.kind === "ok") {
        this.runs = result.data.runs;
        this.scanned = result.data.scanned;
        // A logdir the backend cannot list (a remote bucket, say) is an error of the run list too.
        this.runsError = result.data.logdir_error ?? null;
        this.noRunsDetails = noRunsDetailsOf(result.data);
        if (!this.scanned || this.runs.some((run) => run.status === "loading")) delay = POLL_MS_LOADING;
      } else if (result.kind === "loading") {
        delay = POLL_MS_LOADING;
      } else {
        this.runsError = result.message;
        delay = POLL_MS_AFTER_ERROR;
      }
    } catch (error) {
      // Not expected (the client answers failures as values), but polling must go on.
      this.runsError = error instanceof Error ? error.message : String(error);
      delay = POLL_MS_AFTER_ERROR;
    } finally {
      this.pollInFlight = false;
    }
    if (this.stopped) return;
    this.update(this.state);
    this.pollTimer = this.win.setTimeout(() => void this.refreshRuns(), delay);
  }

  private select(patch: Partial<Pick<UrlState, "run" | "worker" | "span">>): void {
    this.update({ ...this.state, ...patch });
  }

  /** Takes a wanted state, resolves it against the runs, writes the URL and re-renders. */
  private update(wanted: UrlState): void {
    if (this.runs === null) {
      // Before the first run list, keep the link exactly as it came.
      this.state = wanted;
    } else {
      const resolved = resolveSelection(this.runs, wanted);
      this.selection = resolved.selection;
      const linkedRunMayStillAppear = !this.scanned && wanted.run !== null && resolved.selection.run?.name !== wanted.run;
      if (linkedRunMayStillAppear) {
        this.state = wanted; // show the fallback, but do not rewrite the link yet
      } else {
        this.state = resolved.state;
        this.urlSync.write(this.state);
      }
    }
    this.render();
  }

  private render(): void {
    this.renderToolbar();
    this.tabs.setActive(this.state.view);
    this.renderLoading();
    this.renderBanner();
    this.runList.update(this.runs ?? [], this.selection.run?.name ?? null, this.noRunsDetails.skipped);
    this.renderMain();
  }

  private renderToolbar(): void {
    const runs = this.runs ?? [];
    const { run, worker, span } = this.selection;
    const scope = viewById(this.state.view).scope;
    this.runPicker.update(
      runs.map((candidate) => ({ value: candidate.name, label: candidate.name })),
      run?.name ?? null,
      this.runs === null ? "loading…" : "no runs",
    );
    this.workerPicker.update(
      (run?.workers ?? []).map((candidate) => ({ value: candidate.name, label: workerLabel(candidate) })),
      worker?.name ?? null,
      run === null || run.status === "ready" ? "no workers" : run.status === "loading" ? "loading…" : "—",
    );
    const spans = worker?.spans ?? [];
    this.spanPicker.update(
      spans.map((name, index) => ({
        value: name,
        label: spanOptionLabel(index, spans.length, name, spanFacts(worker, index)),
        title: spanOptionTitle(name, spanFacts(worker, index)),
      })),
      span,
      run === null || run.status === "ready" ? "no spans" : "—",
    );
    // Run-level views ignore worker and span; "any" views pick their own.
    this.workerPicker.select.disabled ||= scope !== "span";
    this.spanPicker.select.disabled ||= scope !== "span";
    this.runMeta.textContent =
      run === null ? "" : [run.framework, run.status === "ready" ? null : run.status].filter((part) => part).join(" · ");
    this.spanNotes.update(
      run !== null && run.status === "ready" && worker !== null && span !== null
        ? { run: run.name, worker: worker.name, span }
        : null,
    );
  }

  private renderLoading(): void {
    if (this.runs === null || (!this.scanned && this.runs.length === 0)) {
      // Until the first answer; after a failed first poll the error banner says why instead.
      if (this.runsError === null) this.loadingBar.show("Looking for profiler runs…", null);
      else this.loadingBar.hide();
      return;
    }
    const selected = this.selection.run;
    if (selected !== null && selected.status === "loading") {
      const progress = selected.progress ?? null;
      const percent = progress !== null ? ` ${formatPercent(progress, 0)}` : "";
      this.loadingBar.show(`Loading ${selected.name}…${percent}`, progress);
      return;
    }
    const loading = this.runs.filter((run) => run.status === "loading");
    if (loading.length === 0) {
      this.loadingBar.hide();
      return;
    }
    const known = loading.map((run) => run.progress).filter((value): value is number => value !== undefined);
    const mean = known.length === loading.length ? known.reduce((sum, value) => sum + value, 0) / known.length : null;
    this.loadingBar.show(`Loading ${loading.length} run${loading.length === 1 ? "" : "s"}…`, mean);
  }

  private renderBanner(): void {
    if (this.runsError === null) {
      this.banner.hidden = true;
      replaceChildren(this.banner);
      return;
    }
    const stale = this.runs !== null ? " The run list below may be out of date." : "";
    replaceChildren(this.banner, createErrorPanel("api-error", "Cannot read the run list", this.runsError + stale));
    this.banner.hidden = false;
  }

  /** What the main area shows, as a key: the view is remounted only when the key changes. */
  private mainKey(view: ViewDefinition): string {
    const { run, worker, span } = this.selection;
    // Not the run count: a run appearing elsewhere must not reset the view being read.
    const parts: unknown[] = [view.id, this.runs === null, this.scanned, run?.name, run?.status, run?.error];
    if (run === null) parts.push(this.noRunsDetails); // the empty page lists what the scan skipped
    if (view.scope === "span") parts.push(worker?.name, span);
    if (view.scope === "any") parts.push(this.runs?.map((candidate) => [candidate.name, candidate.status]));
    parts.push(this.externalRevision);
    return JSON.stringify(parts);
  }

  private renderMain(): void {
    const view = viewById(this.state.view);
    const key = this.mainKey(view);
    if (this.mounted?.key === key) return;
    this.mounted?.controller.abort();
    const controller = new AbortController();
    this.mounted = { key, controller };
    replaceChildren(this.main);
    this.main.dataset["view"] = view.id;

    const run = this.selection.run;
    if (this.runs === null || (!this.scanned && run === null)) {
      this.main.appendChild(lookingForRunsState());
    } else if (run === null) {
      this.main.appendChild(noRunsState(this.noRunsDetails));
    } else if (view.scope !== "any" && run.status === "loading") {
      const progress = run.progress !== undefined ? `${formatPercent(run.progress, 0)} done.` : "";
      this.main.appendChild(runLoadingState(run.name, progress));
    } else if (view.scope !== "any" && run.status === "error") {
      this.main.appendChild(createErrorPanel("run-error", `${run.name} could not be loaded`, run.error ?? "No reason given."));
    } else if (view.scope === "span" && this.selection.span === null) {
      this.main.appendChild(runWithoutSpansState(run.name));
    } else {
      const host = el("div", { className: "ps-view", testId: `view-${view.id}` });
      this.main.appendChild(host);
      view.mount(host, this.viewContext(view, controller.signal));
    }
  }

  private viewContext(view: ViewDefinition, signal: AbortSignal): ViewContext {
    const prefix = `${view.id}.`;
    return {
      api: this.api,
      runs: this.runs ?? [],
      selection: this.selection,
      signal,
      param: (name) => this.state.params[prefix + name] ?? null,
      setParams: (patch) => {
        if (signal.aborted) return;
        const params = { ...this.state.params };
        for (const [name, value] of Object.entries(patch)) {
          if (value === null) delete params[prefix + name];
          else params[prefix + name] = value;
        }
        this.state = { ...this.state, params };
        if (this.runs !== null) this.urlSync.write(this.state);
      },
      navigate: (target, params = {}, span) => {
        if (signal.aborted) return;
        const merged: Record<string, string> = { ...this.state.params };
        for (const [name, value] of Object.entries(params)) {
          if (value === null) delete merged[`${target}.${name}`];
          else merged[`${target}.${name}`] = value;
        }
        this.externalRevision += 1;
        const where = span !== undefined ? { worker: span.worker, span: span.span } : {};
        this.update({ ...this.state, ...where, view: target, params: merged });
      },
    };
  }
}

function noRunsDetailsOf(response: RunsResponse): NoRunsDetails {
  return { skipped: response.skipped, lookedFor: response.looked_for };
}
