// Where the backend's routes live, decided in one place.
//
// Inside TensorBoard the bundle runs in an iframe whose document is
// `<prefix>/data/plugin_entry.html?name=profscope` and which declares
// `<base href="plugin/profscope/">`, so its base URL is `<prefix>/data/plugin/profscope/`
// whatever `--path_prefix` TensorBoard has. Standalone (`profscope serve`) the page is the
// app root and the routes are `data/plugin/profscope/...` below it.

export const PLUGIN_NAME = "profscope";
export const PLUGIN_ROUTES_PATH = `data/plugin/${PLUGIN_NAME}/`;

/** Name of the global a test page may set before render() to point the client elsewhere. */
export const API_BASE_GLOBAL = "PROFSCOPE_API_BASE";
/** Query parameter of the page URL that overrides the base, e.g. `?api=/other/prefix/`. */
export const API_BASE_QUERY_PARAM = "api";

export interface ApiBaseInputs {
  /** `location.href` of the document that runs the bundle. */
  readonly pageUrl: string;
  /** `document.baseURI` (differs from pageUrl when the page has a `<base>` element). */
  readonly documentBaseUri: string;
  /** Value of `globalThis.PROFSCOPE_API_BASE`, if any. */
  readonly globalOverride?: unknown;
}

function withTrailingSlash(url: URL): string {
  const copy = new URL(url.href);
  copy.search = "";
  copy.hash = "";
  if (!copy.pathname.endsWith("/")) copy.pathname += "/";
  return copy.href;
}

/**
 * An override is honoured only on the page's own origin: a shared link must not be able to
 * point the UI at someone else's server.
 */
function sameOriginOverride(value: unknown, page: URL): string | null {
  if (typeof value !== "string" || value.trim() === "") return null;
  let url: URL;
  try {
    url = new URL(value.trim(), page);
  } catch {
    return null;
  }
  return url.origin === page.origin ? withTrailingSlash(url) : null;
}

/** The absolute URL, ending in "/", that route names such as `runs` are resolved against. */
export function resolveApiBase(inputs: ApiBaseInputs): string {
  const page = new URL(inputs.pageUrl);
  const override =
    sameOriginOverride(page.searchParams.get(API_BASE_QUERY_PARAM), page) ??
    sameOriginOverride(inputs.globalOverride, page);
  if (override !== null) return override;

  const base = new URL(inputs.documentBaseUri);
  if (base.pathname.endsWith(`/${PLUGIN_ROUTES_PATH}`)) return withTrailingSlash(base);
  return withTrailingSlash(new URL(PLUGIN_ROUTES_PATH, base));
}
