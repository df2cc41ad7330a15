import assert from "node:assert/strict";
import { test } from "node:test";
import type { ApiResult } from "../src/api/types";
import { loadUntilReady } from "../src/lib/retry";

function recorder() {
  const events: string[] = [];
  return {
    events,
    handlers: {
      loading: (progress: number | null) => events.push(`loading ${progress}`),
      ok: (data: string) => events.push(`ok ${data}`),
      error: (message: string) => events.push(`error ${message}`),
    },
  };
}

function sequence(results: ApiResult<string>[]): () => Promise<ApiResult<string>> {
  let call = 0;
  return async () => results[Math.min(call++, results.length - 1)]!;
}

test("polls while loading, with growing waits, until the answer is ready", async () => {
  const { events, handlers } = recorder();
  const waits: number[] = [];
  await loadUntilReady(
    sequence([
      { kind: "loading", progress: 0.1 },
      { kind: "loading", progress: null },
      { kind: "loading", progress: 0.9 },
      { kind: "ok", data: "done" },
    ]),
    handlers,
    new AbortController().signal,
    { delayMs: 100, maxDelayMs: 200, wait: async (ms) => void waits.push(ms) },
  );
  assert.deepEqual(events, ["loading 0.1", "loading null", "loading 0.9", "ok done"]);
  assert.deepEqual(waits, [100, 150, 200]);
});

test("an error ends the loading", async () => {
  const { events, handlers } = recorder();
  await loadUntilReady(
    sequence([{ kind: "error", status: 422, message: "truncated gzip" }]),
    handlers,
    new AbortController().signal,
    { wait: async () => undefined },
  );
  assert.deepEqual(events, ["error truncated gzip"]);
});

test("aborting stops polling without calling a handler again", async () => {
  const { events, handlers } = recorder();
  const controller = new AbortController();
  await loadUntilReady(sequence([{ kind: "loading", progress: 0.5 }]), handlers, controller.signal, {
    wait: async () => controller.abort(),
  });
  assert.deepEqual(events, ["loading 0.5"]);
});

test("an aborted fetch is silent; another exception is an error", async () => {
  const aborted = recorder();
  const controller = new AbortController();
  await loadUntilReady(
    async () => {
      controller.abort();
      throw new DOMException("aborted", "AbortError");
    },
    aborted.handlers,
    controller.signal,
  );
  assert.deepEqual(aborted.events, []);

  const failed = recorder();
  await loadUntilReady(async () => {
    throw new Error("boom");
  }, failed.handlers, new AbortController().signal);
  assert.deepEqual(failed.events, ["error boom"]);
});
