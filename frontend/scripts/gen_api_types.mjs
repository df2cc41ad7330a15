// Generates src/api/generated/openapi.ts, the TypeScript types of every route's answer, from the API
// contract (../tb_plugin/api/openapi.yaml) with openapi-typescript (pinned in package.json). The file is
// git-ignored: build, typecheck and test run this first, so the types can never be older than the contract.
// Rewrites the file only when its text changes (an unchanged file keeps its time, for make).
//   node scripts/gen_api_types.mjs           generate
//   node scripts/gen_api_types.mjs --check   exit 1 when the file is missing or differs (writes nothing)
import openapiTS, { astToString } from "openapi-typescript";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const frontendDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const CONTRACT = resolve(frontendDir, "..", "tb_plugin", "api", "openapi.yaml");
export const GENERATED = resolve(frontendDir, "src", "api", "generated", "openapi.ts");

const HEADER = [
  "// Generated from tb_plugin/api/openapi.yaml by frontend/scripts/gen_api_types.mjs (openapi-typescript); do not edit.",
  "// Build, typecheck and test regenerate it; the frontend's answer types are aliases of these (src/api/schema.ts).",
  "",
].join("\n");

/** The generated module's text for the contract as it is now. */
export async function generatedText() {
  const ast = await openapiTS(pathToFileURL(CONTRACT), {
    // Answers are read, never built, by the page: every field readonly, as the page's own types are.
    immutable: true,
    // `{type: object}` without properties is an object whose values the page must look at before use.
    emptyObjectsUnknown: true,
  });
  return HEADER + astToString(ast);
}

async function main() {
  const check = process.argv.includes("--check");
  const text = await generatedText();
  const current = existsSync(GENERATED) ? readFileSync(GENERATED, "utf8") : null;
  const name = relative(frontendDir, GENERATED);
  if (check) {
    if (current !== text) {
      console.error(`${name} is ${current === null ? "missing" : "stale"}: run \`node scripts/gen_api_types.mjs\` in frontend/`);
      process.exit(1);
    }
    return;
  }
  if (current === text) return;
  mkdirSync(dirname(GENERATED), { recursive: true });
  writeFileSync(GENERATED, text);
  console.log(`gen_api_types: wrote ${name} from ${relative(frontendDir, CONTRACT)}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
