// The thin bar under the tabs that tells what is still loading. Progress 0..1, or null when
// the backend does not know how far it is (drawn as an indeterminate bar).
import { el } from "./dom";

export interface LoadingBar {
  readonly root: HTMLElement;
  show(text: string, progress: number | null): void;
  hide(): void;
}

export function createLoadingBar(): LoadingBar {
  const fill = el("div", { className: "ps-loading-fill" });
  const track = el("div", { className: "ps-loading-track" }, fill);
  const label = el("span", { className: "ps-loading-text" });
  const root = el(
    "div",
    { className: "ps-loading", testId: "loading-bar", hidden: true, attrs: { role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100" } },
    track,
    label,
  );

  return {
    root,
    show(text, progress) {
      root.hidden = false;
      root.dataset["state"] = "loading";
      label.textContent = text;
      root.setAttribute("aria-valuetext", text);
      root.classList.toggle("ps-indeterminate", progress === null);
      if (progress === null) {
        root.removeAttribute("aria-valuenow");
        fill.style.width = "";
      } else {
        const percent = Math.round(progress * 100);
        root.setAttribute("aria-valuenow", String(percent));
        fill.style.width = `${percent}%`;
      }
    },
    hide() {
      root.hidden = true;
      root.dataset["state"] = "idle";
    },
  };
}
