// Compiles test/*.test.ts (each bundled with the sources it imports) into dist/test/ and
// runs them with Node's built-in test runner. No browser: the tests cover pure logic.
import * as esbuild from "esbuild";
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const frontendDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(frontendDir, "dist", "test");
const testFiles = readdirSync(join(frontendDir, "test"))
  .filter((name) => name.endsWith(".test.ts"))
  .sort();
if (testFiles.length === 0) {
  console.error("test: no test/*.test.ts files found");
  process.exit(1);
}

rmSync(outdir, { recursive: true, force: true });
await esbuild.build({
  absWorkingDir: frontendDir,
  entryPoints: testFiles.map((name) => `test/${name}`),
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  format: "esm",
  platform: "node",
  target: ["node20"],
  packages: "external",
  sourcemap: "inline",
  logLevel: "warning",
});

const compiled = testFiles.map((name) => join(outdir, name.replace(/\.ts$/, ".mjs")));
const result = spawnSync(process.execPath, ["--test", ...compiled], { stdio: "inherit" });
process.exit(result.status ?? 1);
