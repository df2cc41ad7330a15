// A stand-in backend for working on the frontend without Python: serves the built bundle
// and canned answers of the routes the shell uses (design §5).
//   npm run build && npm run fake-server -- [--port 6011] [--empty]
// Pages:
//   /                  standalone page (as `profscope serve` will be): routes under /data/plugin/profscope/
//   /tb/               a TensorBoard-like host page: same-origin iframe data/plugin_entry.html with
//                      <base href="plugin/profscope/"> exactly like TensorBoard's; /tb/?dark=1 marks dark mode
// The "live/job" run loads over a few polls; "broken" failed to load (its message holds markup,
// which must show as text). Analysis routes (overview, operators, kernels, ...) come from
// dev/fake_analysis.mjs.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { analysisRoute } from "./fake_analysis.mjs";

const bundlePath = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "tb_plugin", "static", "index.js");
const args = process.argv.slice(2);
const port = Number(args[args.indexOf("--port") + 1]) || 6011;
const empty = args.includes("--empty");
const startedAt = Date.now();
const LOAD_MS = 8000;

/** A worker as the contract describes it: its spans, each with its span_info (facts not known: not loaded). */
function worker(name, spans) {
  const info = (span) => ({ name: span, status: "ready", file: `${name}.${span}.pt.trace.json.gz`, size: 1, start_time: null, duration: null, steps: null, device: null });
  return { name, spans, span_info: spans.map(info) };
}

function runs() {
  if (empty) return [];
  const loaded = Math.min(1, (Date.now() - startedAt) / LOAD_MS);
  const live =
    loaded < 1
      ? { name: "live/job", status: "loading", progress: loaded, workers: [] }
      : { name: "live/job", status: "ready", framework: "pytorch", workers: [worker("rank0", ["1795303442092317655"])] };
  return [
    {
      name: "resnet50_num_workers_0",
      status: "ready",
      framework: "pytorch",
      workers: [worker("worker0", ["1623143089861", "1623143566756"])],
    },
    {
      name: "ddp_gloo_2ranks",
      status: "ready",
      framework: "pytorch",
      workers: [
        worker("rank0", ["1795303450949782497"]),
        worker("rank1", ["1795303450959318656"]),
      ],
    },
    live,
    { name: "broken", status: "error", error: "worker0.1.pt.trace.json.gz: truncated gzip stream <img src=x onerror=alert(1)>", workers: [] },
  ];
}

function json(response, status, body) {
  response.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
  response.end(JSON.stringify(body));
}

function html(response, body) {
  response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
  response.end(body);
}

function api(route, query, response) {
  if (route === "runs") return json(response, 200, { runs: runs(), scanned: true, pending_files: 0, skipped: { count: 0, reasons: {}, examples: {} } });
  const run = runs().find((candidate) => candidate.name === query.get("run"));
  if (run === undefined) return json(response, 404, { error: `unknown run '${query.get("run")}'` });
  if (run.status === "loading") return json(response, 202, { status: "loading", progress: run.progress });
  if (run.status === "error") return json(response, 422, { error: run.error });
  const answer = analysisRoute(route, query, run);
  if (answer !== null) return json(response, answer[0], answer[1]);
  return json(response, 404, { error: `the fake backend has no '${route}' route` });
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", `http://${request.headers.host}`);
  const path = url.pathname;
  const routeMatch = /^(?:\/tb)?\/data\/plugin\/profscope\/(.+)$/.exec(path);
  if (routeMatch !== null && routeMatch[1] === "index.js") {
    response.writeHead(200, { "Content-Type": "text/javascript", "Cache-Control": "no-store" });
    return response.end(readFileSync(bundlePath));
  }
  if (routeMatch !== null) return api(routeMatch[1], url.searchParams, response);
  if (path === "/" || path === "/index.html") {
    return html(
      response,
      `<!doctype html><html><head><meta charset="utf-8"><title>Profscope</title></head>` +
        `<body><script type="module">import("./data/plugin/profscope/index.js").then((m) => m.render());</script></body></html>`,
    );
  }
  if (path === "/tb/") {
    const dark = url.searchParams.get("dark") === "1" ? ' class="dark-mode"' : "";
    return html(
      response,
      `<!doctype html><html><head><meta charset="utf-8"><title>TensorBoard (fake)</title>` +
        `<style>html,body{margin:0;height:100%}body{display:flex;flex-direction:column}` +
        `header{background:#f57c00;color:#fff;padding:10px 16px;font:14px sans-serif}` +
        `iframe{border:0;flex:1;width:100%}</style></head><body${dark}><tb-webapp></tb-webapp>` +
        `<header>TensorBoard (fake host) · PROFSCOPE</header>` +
        `<iframe src="data/plugin_entry.html?name=profscope"></iframe></body></html>`,
    );
  }
  if (path === "/tb/data/plugin_entry.html") {
    // The same document TensorBoard's backend/application.py serves for es_module_path="/index.js".
    return html(
      response,
      `<!DOCTYPE html><head><base href="plugin/profscope/" /></head>` +
        `<body><script type="module">import("./index.js").then((m) => void m.render());</script></body>`,
    );
  }
  response.writeHead(404, { "Content-Type": "text/plain" });
  response.end("not found");
});

server.listen(port, "127.0.0.1", () => {
  console.log(`fake Profscope backend: http://127.0.0.1:${port}/ (standalone), http://127.0.0.1:${port}/tb/ (TensorBoard-like)`);
});
