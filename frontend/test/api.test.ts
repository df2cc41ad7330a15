import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { resolveApiBase } from "../src/api/base";
import { ignoreAbort, isAbortError } from "../src/api/abort";
import { ApiClient, type FetchLike } from "../src/api/client";

describe("API base URL", () => {
  test("inside TensorBoard: the iframe's <base href> is the plugin's route folder, under any path prefix", () => {
    for (const prefix of ["", "/tb", "/a/b"]) {
      const page = `http://host:6006${prefix}/data/plugin_entry.html?name=profscope`;
      const base = `http://host:6006${prefix}/data/plugin/profscope/`;
      assert.equal(resolveApiBase({ pageUrl: page, documentBaseUri: base }), base);
    }
  });

  test("standalone: routes sit below the page's folder", () => {
    assert.equal(
      resolveApiBase({ pageUrl: "http://127.0.0.1:8000/", documentBaseUri: "http://127.0.0.1:8000/" }),
      "http://127.0.0.1:8000/data/plugin/profscope/",
    );
    assert.equal(
      resolveApiBase({ pageUrl: "http://h/x/index.html#run=a", documentBaseUri: "http://h/x/index.html#run=a" }),
      "http://h/x/data/plugin/profscope/",
    );
  });

  test("?api= and the global override it, on the same origin only", () => {
    const page = "http://h/?api=/mock/api";
    assert.equal(resolveApiBase({ pageUrl: page, documentBaseUri: page }), "http://h/mock/api/");
    assert.equal(
      resolveApiBase({ pageUrl: "http://h/", documentBaseUri: "http://h/", globalOverride: "/fixtures/" }),
      "http://h/fixtures/",
    );
    const evil = "http://h/?api=https://elsewhere.example/";
    assert.equal(resolveApiBase({ pageUrl: evil, documentBaseUri: evil }), "http://h/data/plugin/profscope/");
  });
});

function fakeFetch(status: number, body: string, seen: string[] = []): FetchLike {
  return async (url) => {
    seen.push(url);
    return new Response(body, { status, headers: { "Content-Type": "application/json" } });
  };
}

describe("ApiClient", () => {
  const base = "http://h/tb/data/plugin/profscope/";

  test("builds route URLs with query parameters", async () => {
    const seen: string[] = [];
    const client = new ApiClient(base, fakeFetch(200, "{}", seen));
    await client.spanRoute("operators", { run: "a/b", worker: "w 0", span: "1" }, { group_by: "stack" });
    assert.equal(seen[0], "http://h/tb/data/plugin/profscope/operators?group_by=stack&run=a%2Fb&worker=w+0&span=1");
    assert.equal(client.url("trace/slices", { start: 0, end: 10.5 }), `${base}trace/slices?start=0&end=10.5`);
    assert.throws(() => client.url("../secret"));
    assert.throws(() => client.url("http://elsewhere/runs"));
  });

  test("sorts answers into ok, loading and error", async () => {
    const ok = await new ApiClient(base, fakeFetch(200, '{"rows": []}')).getJson("operators");
    assert.deepEqual(ok, { kind: "ok", data: { rows: [] } });
    const loading = await new ApiClient(base, fakeFetch(202, '{"status": "loading", "progress": 0.25}')).getJson("overview");
    assert.deepEqual(loading, { kind: "loading", progress: 0.25 });
    const missing = await new ApiClient(base, fakeFetch(404, '{"error": "unknown run \'x\'"}')).getJson("overview");
    assert.deepEqual(missing, { kind: "error", status: 404, message: "unknown run 'x'" });
    const failed = await new ApiClient(base, fakeFetch(422, '{"error": "truncated gzip"}')).getJson("overview");
    assert.deepEqual(failed, { kind: "error", status: 422, message: "truncated gzip" });
    const html = await new ApiClient(base, fakeFetch(500, "<html>oops</html>")).getJson("overview");
    assert.equal(html.kind === "error" && html.status, 500);
  });

  test("a network failure is an error result; an abort rejects", async () => {
    const down = new ApiClient(base, async () => {
      throw new TypeError("Failed to fetch");
    });
    const result = await down.runs();
    assert.equal(result.kind, "error");
    assert.equal(result.kind === "error" && result.status, 0);

    const controller = new AbortController();
    controller.abort();
    const aborting = new ApiClient(base, async (_url, init) => {
      init?.signal?.throwIfAborted();
      return new Response("{}");
    });
    await assert.rejects(aborting.runs(controller.signal), { name: "AbortError" });
  });

  test("the bodies of 202 and error answers are checked: they may come from a proxy, not the backend", async () => {
    const proxy = await new ApiClient(base, fakeFetch(202, "<html>busy</html>")).getJson("overview");
    assert.deepEqual(proxy, { kind: "loading", progress: null });
    const odd = await new ApiClient(base, fakeFetch(202, '{"progress": 7}')).getJson("overview");
    assert.deepEqual(odd, { kind: "loading", progress: 1 });
    const gateway = await new ApiClient(base, fakeFetch(502, '{"message": "bad gateway"}')).runs();
    assert.deepEqual(gateway, { kind: "error", status: 502, message: "'runs' failed: HTTP 502" });
    const notJson = await new ApiClient(base, fakeFetch(200, "<html>login</html>")).runs();
    assert.deepEqual(notJson, { kind: "error", status: 200, message: "The answer of 'runs' is not valid JSON." });
  });
});

describe("aborted requests", () => {
  test("ignoreAbort ends a fire-and-forget request that was aborted, and lets any other error through", async () => {
    const aborted = new AbortController();
    aborted.abort();
    const client = new ApiClient("http://127.0.0.1/data/plugin/profscope/", async (_url, init) => {
      init?.signal?.throwIfAborted();
      return new Response("{}");
    });
    // The client rejects an aborted request (nobody waits for its answer) ...
    await assert.rejects(client.getJson("runs", {}, aborted.signal), (error: unknown) => isAbortError(error));
    // ... and .catch(ignoreAbort) makes that the quiet end it is.
    await client.getJson("runs", {}, aborted.signal).then(() => assert.fail("no answer after an abort")).catch(ignoreAbort);
    assert.throws(() => ignoreAbort(new TypeError("a bug")), TypeError);
  });
});
