// The frontend's layers, checked on the import statements of src/ (as tests/test_architecture.py does for the
// backend): the API client knows no page, shared components and pure logic know no page, each page folder
// (views/<page>/) imports no other page's folder, and the trace viewer (trace/) is its own folder that only the
// Trace page mounts. A violation fails with the file, the import and the rule.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = normalize(join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src"));

/** One import: from a module to a module, both as paths relative to src/ with "/" (e.g. "views/kernel/kernel.ts"). */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

/** The layer of a module: its top folder, or "views/<page>" inside a page folder, or "views" for views/*.ts. */
function layerOf(path: string): string {
  const parts = path.split("/");
  if (parts.length === 1) return "(shell)";
  if (parts[0] === "views") return parts.length > 2 ? `views/${parts[1]}` : "views";
  return parts[0]!;
}

const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  api: ["api"],
  state: ["state", "api"],
  lib: ["lib", "api"],
  host: ["host"],
  components: ["components", "lib", "api", "state"],
  trace: ["trace", "components", "lib", "api", "state"],
  views: ["views", "api", "components", "lib", "state"],
};

/** Why an import breaks the layers, or null. */
export function violation(edge: ImportEdge): string | null {
  const from = layerOf(edge.from);
  const to = layerOf(edge.to);
  if (from === to || from === "(shell)") return null;
  if (from === "views" && to.startsWith("views/")) return null; // the page registry lists every page
  if (to === "views" && edge.to === "views/types.ts" && (from === "trace" || from.startsWith("views/"))) return null; // the view contract
  if (from.startsWith("views/")) {
    if (to.startsWith("views/")) return `a page imports another page's folder (${to}): share it through components/ or lib/`;
    if (to === "trace") return from === "views/trace" ? null : "only the Trace page mounts the trace viewer (trace/)";
    return (ALLOWED["views"] ?? []).includes(to) ? null : `a page may not import ${to}/`;
  }
  const allowed = ALLOWED[from];
  if (allowed === undefined) return `${from}/ is a folder the layer rules do not know: add it to test/architecture.test.ts`;
  return allowed.includes(to) ? null : `${from}/ may import only ${allowed.join(", ")}`;
}

function sources(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) {
      if (name !== "generated") out.push(...sources(path));
    } else if (name.endsWith(".ts")) {
      out.push(path);
    }
  }
  return out;
}

function importsOf(file: string): ImportEdge[] {
  const text = readFileSync(file, "utf8");
  const from = relative(SRC, file).split(sep).join("/");
  const edges: ImportEdge[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?:[^"';]*?\sfrom\s+)?"(\.{1,2}\/[^"]+)"/g)) {
    const target = normalize(join(dirname(file), match[1]!));
    edges.push({ from, to: `${relative(SRC, target).split(sep).join("/")}.ts` });
  }
  return edges;
}

describe("frontend layers", () => {
  test("every import of src/ keeps the layers", () => {
    const edges = sources(SRC).flatMap(importsOf);
    assert.ok(edges.length > 300, `only ${edges.length} imports found: the scan is broken`);
    const broken = edges.flatMap((edge) => {
      const why = violation(edge);
      return why === null ? [] : [`${edge.from} imports ${edge.to}: ${why}`];
    });
    assert.deepEqual(broken, []);
  });

  test("the rules catch each kind of violation", () => {
    const bad: ImportEdge[] = [
      { from: "api/overview.ts", to: "views/overview/overview.ts" },
      { from: "api/overview.ts", to: "lib/format.ts" },
      { from: "components/chart.ts", to: "views/kernel/kernel.ts" },
      { from: "lib/format.ts", to: "components/dom.ts" },
      { from: "views/kernel/kernel.ts", to: "views/operator/columns.ts" },
      { from: "views/overview/overview.ts", to: "trace/viewer.ts" },
      { from: "trace/viewer.ts", to: "views/trace/trace.ts" },
    ];
    for (const edge of bad) assert.notEqual(violation(edge), null, `${edge.from} -> ${edge.to}`);
    const good: ImportEdge[] = [
      { from: "views/kernel/kernel.ts", to: "views/types.ts" },
      { from: "views/trace/trace.ts", to: "trace/viewer.ts" },
      { from: "views/registry.ts", to: "views/kernel/kernel.ts" },
      { from: "trace/ranks/ranks_mode.ts", to: "views/types.ts" },
      { from: "lib/metrics.ts", to: "api/overview.ts" },
    ];
    for (const edge of good) assert.equal(violation(edge), null, `${edge.from} -> ${edge.to}`);
  });
});
