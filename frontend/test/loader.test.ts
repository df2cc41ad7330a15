import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type { ApiResult } from "../src/api/types";
import { createHostLoader, createSignalSlot, loadInto, type HostLoad } from "../src/components/loader";
import { fakeHost, installFakeDocument, type FakeElement } from "./fake_dom";

beforeEach(installFakeDocument);

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** Answers the fetches in order, the last one again when asked more often. */
function answers<T>(results: ApiResult<T>[]): (signal: AbortSignal) => Promise<ApiResult<T>> {
  let call = 0;
  return async () => results[Math.min(call++, results.length - 1)]!;
}

interface Rendered {
  readonly data: string;
  readonly signal: AbortSignal;
}

function kernelsLoad(
  host: HTMLElement,
  fetch: (signal: AbortSignal) => Promise<ApiResult<string>>,
  rendered: Rendered[],
  extra: Partial<HostLoad<string>> = {},
): HostLoad<string> {
  return {
    host,
    fetch,
    what: "the kernels",
    testIdPrefix: "kernel",
    errorTitle: "The kernels could not be computed",
    render: (data, signal) => {
      rendered.push({ data, signal });
      host.textContent = `rows: ${data}`;
    },
    ...extra,
  };
}

/** The only child of the host: what the user sees there. */
function shown(fake: FakeElement): FakeElement {
  assert.equal(fake.children.length, 1, "the host shows exactly one element");
  return fake.children[0]!;
}

test("shows the loading note at once, then renders the answer", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  const answer = deferred<ApiResult<string>>();
  const done = loadInto(kernelsLoad(host, () => answer.promise, rendered), new AbortController().signal);

  const note = shown(fake);
  assert.equal(note.dataset["testid"], "kernel-loading");
  assert.equal(note.className, "ps-view-loading");
  assert.equal(note.getAttribute("role"), "status");
  assert.equal(note.textContent, "Loading the kernels…");

  answer.resolve({ kind: "ok", data: "3" });
  await done;
  assert.deepEqual(
    rendered.map((entry) => entry.data),
    ["3"],
  );
  assert.equal(rendered[0]!.signal.aborted, false);
});

test("while the backend answers 202 it shows the progress and polls with growing waits", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  const notes: string[] = [];
  const waits: number[] = [];
  const state = fakeHost();
  await loadInto(
    kernelsLoad(
      host,
      answers<string>([
        { kind: "loading", progress: 0.4 },
        { kind: "loading", progress: null },
        { kind: "loading", progress: 0.95 },
        { kind: "ok", data: "12" },
      ]),
      rendered,
      {
        waitingFor: "the span",
        stateOn: state.host,
        retry: {
          // Records each note as the user sees it before the next poll.
          wait: async (ms) => {
            waits.push(ms);
            notes.push(shown(fake).textContent);
            assert.equal(state.fake.dataset["state"], "loading");
          },
        },
      },
    ),
    new AbortController().signal,
  );
  assert.deepEqual(notes, ["Loading the span… 40%", "Loading the span…", "Loading the span… 95%"]);
  // The views' timing: 800 ms, then half as long again each time (capped at 5 s).
  assert.deepEqual(waits, [800, 1200, 1800]);
  assert.deepEqual(
    rendered.map((entry) => entry.data),
    ["12"],
  );
  assert.equal(state.fake.dataset["state"], "ready");
});

test("a 4xx/5xx answer shows the error panel with the backend's message", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  const state = fakeHost();
  await loadInto(
    kernelsLoad(host, answers<string>([{ kind: "error", status: 422, message: "truncated gzip in trace.json.gz" }]), rendered, {
      stateOn: state.host,
    }),
    new AbortController().signal,
  );
  const panel = shown(fake);
  assert.equal(panel.dataset["testid"], "kernel-error");
  assert.equal(panel.className, "ps-error");
  assert.equal(panel.getAttribute("role"), "alert");
  assert.equal(panel.children[0]!.textContent, "The kernels could not be computed");
  assert.equal(panel.findByTestId("kernel-error-message")?.textContent, "truncated gzip in trace.json.gz");
  assert.equal(rendered.length, 0);
  assert.equal(state.fake.dataset["state"], "error");
});

test("a network failure shows the error panel too", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  await loadInto(
    kernelsLoad(
      host,
      async () => {
        throw new TypeError("Failed to fetch");
      },
      rendered,
    ),
    new AbortController().signal,
  );
  assert.equal(shown(fake).findByTestId("kernel-error-message")?.textContent, "Failed to fetch");
  assert.equal(rendered.length, 0);
});

test("a new load supersedes the previous one: its late answer is ignored", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  const view = new AbortController();
  const loader = createHostLoader(view.signal);
  const first = deferred<ApiResult<string>>();
  const second = deferred<ApiResult<string>>();
  const seen: AbortSignal[] = [];

  const firstDone = loader.load(
    kernelsLoad(
      host,
      (signal) => {
        seen.push(signal);
        return first.promise;
      },
      rendered,
    ),
  );
  const secondDone = loader.load(
    kernelsLoad(
      host,
      (signal) => {
        seen.push(signal);
        return second.promise;
      },
      rendered,
    ),
  );
  assert.equal(seen[0]!.aborted, true, "starting the second load aborts the first");
  assert.equal(seen[1]!.aborted, false);

  second.resolve({ kind: "ok", data: "by operator" });
  await secondDone;
  first.resolve({ kind: "ok", data: "by name" });
  await firstDone;

  assert.deepEqual(
    rendered.map((entry) => entry.data),
    ["by operator"],
  );
  assert.equal(fake.textContent, "rows: by operator");
  // A late error of the superseded load is ignored as well.
  const third = deferred<ApiResult<string>>();
  const thirdDone = loader.load(kernelsLoad(host, () => third.promise, rendered));
  const fourthDone = loader.load(kernelsLoad(host, answers<string>([{ kind: "ok", data: "last" }]), rendered));
  await fourthDone;
  third.resolve({ kind: "error", status: 500, message: "late failure" });
  await thirdDone;
  assert.equal(fake.textContent, "rows: last");
  assert.equal(fake.findByTestId("kernel-error"), null);
});

test("aborting while the backend is still loading stops polling and draws nothing more", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  const view = new AbortController();
  let fetches = 0;
  await loadInto(
    kernelsLoad(
      host,
      async () => {
        fetches += 1;
        return { kind: "loading", progress: 0.5 };
      },
      rendered,
      { retry: { wait: async () => view.abort() } },
    ),
    view.signal,
  );
  assert.equal(fetches, 1);
  assert.equal(rendered.length, 0);
  assert.equal(shown(fake).textContent, "Loading the kernels… 50%");
});

test("cancelling a loader aborts its load; the answer that arrives afterwards is ignored", async () => {
  const { fake, host } = fakeHost();
  const rendered: Rendered[] = [];
  const loader = createHostLoader(new AbortController().signal);
  const answer = deferred<ApiResult<string>>();
  const done = loader.load(kernelsLoad(host, () => answer.promise, rendered));
  loader.cancel();
  answer.resolve({ kind: "ok", data: "too late" });
  await done;
  assert.equal(rendered.length, 0);
  assert.equal(shown(fake).dataset["testid"], "kernel-loading");
});

test("a view's own note replaces the standard one", async () => {
  const { fake, host } = fakeHost();
  const notes: string[] = [];
  const load = kernelsLoad(
    host,
    answers<string>([{ kind: "loading", progress: 0.25 }, { kind: "ok", data: "x" }]),
    [],
    {
      note: (stage) => {
        const text = stage.kind === "requested" ? "asked" : `waiting ${stage.progress}`;
        notes.push(text);
        const element = document.createElement("p");
        element.textContent = text;
        return element;
      },
      noteAtStart: false,
      retry: { wait: async () => undefined },
    },
  );
  const done = loadInto(load, new AbortController().signal);
  assert.equal(fake.children.length, 0, "noteAtStart: false leaves the host as it was");
  await done;
  assert.deepEqual(notes, ["waiting 0.25"]);
  assert.equal(fake.textContent, "rows: x");
});

test("a signal slot ends every signal with its parent, and a fresh one after the parent is aborted is aborted", () => {
  const parent = new AbortController();
  const slot = createSignalSlot(parent.signal);
  const first = slot.next();
  const second = slot.next();
  assert.equal(first.aborted, true);
  assert.equal(second.aborted, false);
  slot.clear();
  assert.equal(second.aborted, true);
  const third = slot.next();
  parent.abort();
  assert.equal(third.aborted, true);
  assert.equal(slot.next().aborted, true);
});
