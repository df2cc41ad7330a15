// Aborted requests: the client rejects a request whose signal was aborted (the page moved on), so that nothing acts
// on an answer nobody waits for. A fire-and-forget request ends with `.catch(ignoreAbort)`: an abort is the expected
// end, anything else is still thrown (a bug stays visible).

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

export function ignoreAbort(error: unknown): void {
  if (!isAbortError(error)) throw error;
}
