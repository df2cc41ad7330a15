// The answers' types, from the API contract (tb_plugin/api/openapi.yaml) through the generated
// module (src/api/generated/openapi.ts, made by scripts/gen_api_types.mjs before every build,
// typecheck and test). Nothing here describes an answer again: a route's answer type is read off
// the contract, so a field renamed or removed there is a compile error wherever the page reads it.
import type { components, paths } from "./generated/openapi";

/** Every schema of the contract by name (`Schema<"Overview">`). */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

type JsonAnswerOf<Path extends keyof paths> = paths[Path] extends {
  readonly get: { readonly responses: { readonly 200: { readonly content: { readonly "application/json": infer A } } } };
}
  ? A
  : never;

/** The name of every route with a JSON answer, as the client spells it (`overview`, `trace/slices`). */
export type Route = {
  [Path in keyof paths]: Path extends `/${infer Name}` ? ([JsonAnswerOf<Path>] extends [never] ? never : Name) : never;
}[keyof paths];

/** What a route answers with 200. */
export type Answer<R extends Route> = JsonAnswerOf<`/${R}` & keyof paths>;

/** An entry of a list type (`Item<Answer<"kernels">["rows"]>`). */
export type Item<List> = List extends readonly (infer Entry)[] ? Entry : never;
