// Light or dark. Inside TensorBoard the parent marks dark mode with a `dark-mode` class on its
// <body> (and toggles it live from its settings); standalone we follow the OS preference.
// `?theme=dark|light` on the page URL forces one (handy for screenshots).

export type Theme = "light" | "dark";

function forcedTheme(win: Window): Theme | null {
  const value = new URL(win.location.href).searchParams.get("theme");
  return value === "dark" || value === "light" ? value : null;
}

/** Calls `apply` now and whenever the theme changes; returns a function that stops watching. */
export function watchTheme(win: Window, tensorBoard: Window | null, apply: (theme: Theme) => void): () => void {
  const forced = forcedTheme(win);
  if (forced !== null) {
    apply(forced);
    return () => {};
  }
  const hostBody = tensorBoard?.document.body ?? null;
  if (hostBody !== null) {
    const update = (): void => apply(hostBody.classList.contains("dark-mode") ? "dark" : "light");
    const observer = new MutationObserver(update);
    observer.observe(hostBody, { attributes: true, attributeFilter: ["class"] });
    update();
    return () => observer.disconnect();
  }
  const query = win.matchMedia("(prefers-color-scheme: dark)");
  const update = (): void => apply(query.matches ? "dark" : "light");
  query.addEventListener("change", update);
  update();
  return () => query.removeEventListener("change", update);
}
