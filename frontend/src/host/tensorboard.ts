// What the shell uses of the TensorBoard page around it. TensorBoard loads the bundle in a
// same-origin iframe (data/plugin_entry.html); standalone there is no parent at all.

/** The TensorBoard window around this iframe, or null (standalone, or not reachable). */
export function tensorBoardParent(win: Window): Window | null {
  if (win.parent === win) return null;
  try {
    // Cross-origin parents throw on any access; TensorBoard's app root is <tb-webapp>.
    return win.parent.document.querySelector("tb-webapp") !== null ? win.parent : null;
  } catch {
    return null;
  }
}

// TensorBoard's plugin messaging (tensorboard/components/experimental/plugin_lib): the iframe
// posts "experimental.bootstrap" with a MessagePort; messages on it are JSON
// {type, id, payload, error, isReply} and every request expects a reply with the same id.
const BOOTSTRAP_MESSAGE = "experimental.bootstrap";
const DATA_RELOADED = "experimental.DataReloaded";

interface HostMessage {
  readonly type: string;
  readonly id: number;
  readonly isReply: boolean;
}

function parseHostMessage(data: unknown): HostMessage | null {
  if (typeof data !== "string") return null;
  try {
    const message: unknown = JSON.parse(data);
    if (typeof message !== "object" || message === null) return null;
    const { type, id, isReply } = message as Record<string, unknown>;
    if (typeof type !== "string" || typeof id !== "number") return null;
    return { type, id, isReply: isReply === true };
  } catch {
    return null;
  }
}

/**
 * Listens for TensorBoard's reload (its reload button and auto-reload), so the run list
 * refreshes with the rest of TensorBoard. Returns a function that disconnects.
 */
export function listenForHostReload(win: Window, host: Window, onReload: () => void): () => void {
  const channel = new MessageChannel();
  const port = channel.port1;
  port.addEventListener("message", (event: MessageEvent) => {
    const message = parseHostMessage(event.data);
    if (message === null || message.isReply) return;
    if (message.type === DATA_RELOADED) onReload();
    port.postMessage(JSON.stringify({ type: message.type, id: message.id, payload: null, error: null, isReply: true }));
  });
  port.start();
  host.postMessage(BOOTSTRAP_MESSAGE, win.location.origin, [channel.port2]);
  return () => port.close();
}
