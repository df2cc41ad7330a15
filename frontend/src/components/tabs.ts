// The view tabs: buttons with role="tab", arrow keys move between them.
import { el } from "./dom";

export interface TabSpec<Id extends string> {
  readonly id: Id;
  readonly label: string;
}

export interface Tabs<Id extends string> {
  readonly root: HTMLElement;
  setActive(id: Id): void;
}

export function createTabs<Id extends string>(specs: readonly TabSpec<Id>[], onSelect: (id: Id) => void): Tabs<Id> {
  const buttons = specs.map((spec) => {
    const button = el(
      "button",
      { className: "ps-tab", testId: `tab-${spec.id}`, attrs: { type: "button", role: "tab", "aria-selected": "false" } },
      spec.label,
    );
    button.addEventListener("click", () => onSelect(spec.id));
    return button;
  });
  const root = el("nav", { className: "ps-tabs", testId: "view-tabs", attrs: { role: "tablist" } }, ...buttons);

  root.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const current = buttons.findIndex((button) => button === document.activeElement);
    if (current < 0) return;
    const step = event.key === "ArrowRight" ? 1 : -1;
    const next = (current + step + buttons.length) % buttons.length;
    const spec = specs[next];
    if (spec === undefined) return;
    buttons[next]?.focus();
    onSelect(spec.id);
    event.preventDefault();
  });

  function setActive(id: Id): void {
    specs.forEach((spec, index) => {
      const button = buttons[index];
      if (button === undefined) return;
      const active = spec.id === id;
      button.setAttribute("aria-selected", String(active));
      button.tabIndex = active ? 0 : -1;
    });
  }

  return { root, setActive };
}
