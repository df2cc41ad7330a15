// Entry point. TensorBoard imports this module inside the plugin's iframe and calls render()
// (see README.md); `profscope serve` and tests call it the same way.
import { resolveApiBase, API_BASE_GLOBAL } from "./api/base";
import { ApiClient } from "./api/client";
import { ProfscopeApp } from "./app";
import { listenForHostReload, tensorBoardParent } from "./host/tensorboard";
import { watchTheme } from "./host/theme";
import { UrlSync } from "./state/url_sync";
import { injectStyles } from "./styles";

let app: ProfscopeApp | null = null;

/**
 * Builds the UI into `container` (default: document.body). TensorBoard calls it with no
 * argument; calling it again does nothing while the first UI is still in the document.
 */
export function render(container: HTMLElement = document.body): void {
  if (app !== null && app.root.isConnected) return;
  app?.stop();

  const win = window;
  const tensorBoard = tensorBoardParent(win);
  const api = new ApiClient(
    resolveApiBase({
      pageUrl: win.location.href,
      documentBaseUri: document.baseURI,
      globalOverride: (globalThis as Record<string, unknown>)[API_BASE_GLOBAL],
    }),
  );

  injectStyles(document);
  watchTheme(win, tensorBoard, (theme) => {
    document.documentElement.dataset["theme"] = theme;
  });

  const started = new ProfscopeApp(api, new UrlSync(win, tensorBoard), win);
  app = started;
  container.appendChild(started.root);
  started.start();
  if (tensorBoard !== null) listenForHostReload(win, tensorBoard, () => void started.refreshRuns());
}
