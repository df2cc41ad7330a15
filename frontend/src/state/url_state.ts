// The part of the app state that lives in the URL, and its (de)serialisation. Pure: no DOM.
//
// Own hash (the iframe's, or the standalone page's):
//   #view=kernel&run=exp/a&worker=worker0&span=1623143089861&kernel.group_by=op_and_name
// TensorBoard's hash (the parent page), in TensorBoard's own `tab&key=value` format, where
// plugins own the keys `p.<plugin>.<key>` (TensorBoard hands them to plugins on request):
//   #profscope&p.profscope.view=kernel&p.profscope.run=exp/a&...

export const VIEW_IDS = ["overview", "steps", "data", "operator", "kernel", "roofline", "stacks", "modules", "memory", "snapshot", "trace", "analyses", "distributed", "compare"] as const;
export type ViewId = (typeof VIEW_IDS)[number];
export const DEFAULT_VIEW: ViewId = "overview";

export interface UrlState {
  readonly view: ViewId;
  readonly run: string | null;
  readonly worker: string | null;
  readonly span: string | null;
  /** View-specific parameters; keys are `<view id>.<name>`, e.g. `operator.group_by`. */
  readonly params: Readonly<Record<string, string>>;
}

export const EMPTY_URL_STATE: UrlState = { view: DEFAULT_VIEW, run: null, worker: null, span: null, params: {} };

/** Prefix of Profscope's keys in TensorBoard's hash. */
export const HOST_KEY_PREFIX = "p.profscope.";

const PARAM_KEY = /^[a-z]+\.[A-Za-z0-9_.-]{1,64}$/;
const MAX_PARAMS = 64;
const MAX_VALUE_LENGTH = 2000;

export function isViewId(value: string): value is ViewId {
  return (VIEW_IDS as readonly string[]).includes(value);
}

/** One `key=value` (or bare `tab`) piece of a hash, with its original text. */
export interface HashEntry {
  readonly raw: string;
  /** Decoded key, or null when the piece could not be decoded. */
  readonly key: string | null;
  /** Decoded value; null for a bare piece without "=". */
  readonly value: string | null;
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** Splits `#a=1&b=2` (leading "#" optional) into its pieces, in order. */
export function splitHash(hash: string): HashEntry[] {
  const body = hash.startsWith("#") ? hash.slice(1) : hash;
  if (body === "") return [];
  return body
    .split("&")
    .filter((raw) => raw !== "")
    .map((raw) => {
      const eq = raw.indexOf("=");
      if (eq < 0) return { raw, key: safeDecode(raw), value: null };
      const key = safeDecode(raw.slice(0, eq));
      const value = safeDecode(raw.slice(eq + 1));
      return value === null ? { raw, key: null, value: null } : { raw, key, value };
    });
}

/** encodeURIComponent, but keeps characters that are safe in a fragment readable. */
export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text).replace(/%2F/gi, "/").replace(/%3A/gi, ":").replace(/%40/gi, "@").replace(/%2C/gi, ",");
}

/**
 * Reads the state from hash pieces whose keys start with `prefix`. Returns null when no
 * piece carries any state, so the caller can look elsewhere.
 */
export function readUrlState(entries: readonly HashEntry[], prefix = ""): UrlState | null {
  let found = false;
  let view: ViewId = DEFAULT_VIEW;
  let run: string | null = null;
  let worker: string | null = null;
  let span: string | null = null;
  const params: Record<string, string> = {};
  let paramCount = 0;
  for (const { key: fullKey, value } of entries) {
    if (fullKey === null || value === null || !fullKey.startsWith(prefix)) continue;
    if (value.length > MAX_VALUE_LENGTH) continue;
    const key = fullKey.slice(prefix.length);
    switch (key) {
      case "view":
        if (isViewId(value)) {
          view = value;
          found = true;
        }
        break;
      case "run":
        run = value;
        found = true;
        break;
      case "worker":
        worker = value;
        found = true;
        break;
      case "span":
        span = value;
        found = true;
        break;
      default:
        if (PARAM_KEY.test(key) && paramCount < MAX_PARAMS && !(key in params)) {
          params[key] = value;
          paramCount += 1;
          found = true;
        }
    }
  }
  return found ? { view, run, worker, span, params } : null;
}

/** Parses an own hash (`#view=...&run=...`); a hash without state gives null. */
export function parseUrlState(hash: string): UrlState | null {
  return readUrlState(splitHash(hash));
}

/** Hash pieces for a state, in a fixed order so equal states give equal text. */
export function urlStatePieces(state: UrlState, prefix = ""): string[] {
  const pieces: string[] = [];
  const add = (key: string, value: string | null): void => {
    if (value !== null) pieces.push(`${encodeHashComponent(prefix + key)}=${encodeHashComponent(value)}`);
  };
  add("view", state.view);
  add("run", state.run);
  add("worker", state.worker);
  add("span", state.span);
  for (const key of Object.keys(state.params).sort()) {
    if (PARAM_KEY.test(key)) add(key, state.params[key] ?? null);
  }
  return pieces;
}

/** The own hash for a state, without the leading "#". */
export function serializeUrlState(state: UrlState): string {
  return urlStatePieces(state).join("&");
}

export function sameUrlState(a: UrlState, b: UrlState): boolean {
  return serializeUrlState(a) === serializeUrlState(b);
}

/** Profscope's state as kept in TensorBoard's hash, or null when it has none. */
export function readHostState(hostHash: string): UrlState | null {
  return readUrlState(splitHash(hostHash), HOST_KEY_PREFIX);
}

/** TensorBoard's active tab: the first bare piece of its hash ("" when none). */
export function hostActiveTab(hostHash: string): string {
  const bare = splitHash(hostHash).find((entry) => entry.value === null && entry.key !== null);
  return bare?.key ?? "";
}

/**
 * TensorBoard's hash with Profscope's keys replaced by `state`; every other piece (the
 * active tab, other plugins' keys) is kept verbatim and in place. No leading "#".
 */
export function mergeHostHash(hostHash: string, state: UrlState): string {
  const kept = splitHash(hostHash)
    .filter((entry) => !(entry.key !== null && entry.key.startsWith(HOST_KEY_PREFIX)))
    .map((entry) => entry.raw);
  return [...kept, ...urlStatePieces(state, HOST_KEY_PREFIX)].join("&");
}
