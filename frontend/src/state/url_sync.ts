// Keeps the UrlState in the page URL so a copied link reopens the same place.
//
// The state lives in the hash of our own document (the plugin iframe inside TensorBoard, the
// page itself standalone). Inside TensorBoard it is mirrored into TensorBoard's hash as
// `p.profscope.<key>` entries (the keys TensorBoard reserves for plugins), keeping TensorBoard's
// own entries, so the address bar of the TensorBoard tab is the shareable link.
// Writes use history.replaceState: no history entry per click, and no hashchange/popstate
// event that TensorBoard would react to.
import { hostActiveTab, mergeHostHash, parseUrlState, readHostState, serializeUrlState, type UrlState } from "./url_state";
import { PLUGIN_NAME } from "../api/base";

function urlWithHash(win: Window, hash: string): string {
  // An absolute URL: relative ones would resolve against the iframe's <base href>.
  const url = new URL(win.location.href);
  url.hash = hash;
  return url.href;
}

export class UrlSync {
  constructor(
    private readonly win: Window,
    private readonly tensorBoard: Window | null,
  ) {}

  /** The state a link asks for: our own hash first, then TensorBoard's `p.profscope.*` keys. */
  read(): UrlState | null {
    const own = parseUrlState(this.win.location.hash);
    if (own !== null) return own;
    return this.readHost();
  }

  private readHost(): UrlState | null {
    if (this.tensorBoard === null) return null;
    try {
      return readHostState(this.tensorBoard.location.hash);
    } catch {
      return null;
    }
  }

  write(state: UrlState): void {
    const hash = serializeUrlState(state);
    if (this.win.location.hash.replace(/^#/, "") !== hash) {
      this.win.history.replaceState(this.win.history.state, "", urlWithHash(this.win, hash));
    }
    this.mirrorToHost(state);
  }

  private mirrorToHost(state: UrlState): void {
    const host = this.tensorBoard;
    if (host === null) return;
    try {
      const current = host.location.hash.replace(/^#/, "");
      // Only while our tab is the active one: never rewrite a link to another dashboard.
      const tab = hostActiveTab(current);
      if (tab !== PLUGIN_NAME && tab !== "") return;
      const next = mergeHostHash(current, state);
      if (next !== current) host.history.replaceState(host.history.state, "", urlWithHash(host, next));
    } catch {
      // The parent went away or became unreachable: the own hash still holds the state.
    }
  }

  /**
   * Calls `onChange` when someone else changes the URL: the user edits our hash, or pastes a
   * TensorBoard link that differs only in its hash. Returns a function that stops listening.
   */
  listen(onChange: (state: UrlState) => void): () => void {
    const onOwnHash = (): void => {
      const state = parseUrlState(this.win.location.hash);
      if (state !== null) onChange(state);
    };
    const onHostHash = (): void => {
      const host = this.tensorBoard;
      if (host === null || hostActiveTab(host.location.hash) !== PLUGIN_NAME) return;
      const state = this.readHost();
      if (state !== null) onChange(state);
    };
    this.win.addEventListener("hashchange", onOwnHash);
    this.tensorBoard?.addEventListener("hashchange", onHostHash);
    return () => {
      this.win.removeEventListener("hashchange", onOwnHash);
      this.tensorBoard?.removeEventListener("hashchange", onHostHash);
    };
  }
}
