// Reads a JSON fixture of test/fixtures/. Tests run compiled from dist/test/, two levels below
// the frontend folder, hence the path.
import { readFileSync } from "node:fs";

export function readFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), "utf8"));
}
