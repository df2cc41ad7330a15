// Builds the plugin bundle: src/main.ts -> ../tb_plugin/static/index.js, one self-contained
// ES module (styles live in a TS string, so there is nothing else to serve).
//   node scripts/build.mjs            one minified build
//   node scripts/build.mjs --watch    rebuild on change (not minified)
import * as esbuild from "esbuild";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const frontendDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = resolve(frontendDir, "..", "tb_plugin", "static", "index.js");
const watch = process.argv.includes("--watch");

mkdirSync(dirname(outfile), { recursive: true });

/** @type {import("esbuild").BuildOptions} */
const options = {
  absWorkingDir: frontendDir,
  entryPoints: ["src/main.ts"],
  outfile,
  bundle: true,
  format: "esm",
  platform: "browser",
  // TensorBoard itself needs an evergreen browser; ES2020 keeps the output plain.
  target: ["es2020"],
  minify: !watch,
  sourcemap: false,
  legalComments: "none",
  charset: "utf8",
  logLevel: "info",
  // uPlot's header is a plain comment that minification drops; its MIT notice is kept here.
  banner: {
    js: [
      "// Profscope TensorBoard plugin frontend. Built from frontend/ by `npm run build`; do not edit.",
      "// Bundles uPlot (https://github.com/leeoniya/uPlot), Copyright (c) 2025, Leon Sorokin, MIT licensed.",
    ].join("\n"),
  },
};

if (watch) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
