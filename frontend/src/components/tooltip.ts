// Tooltips that say how a number is computed. An element carries its text in `data-tip`;
// one floating box per document shows it on hover and on keyboard focus. Text only.

const TIP_ID = "ps-tooltip";
const SHOW_DELAY_MS = 200;
const installed = new WeakSet<Document>();

/** Gives `element` a tooltip (and makes it focusable, so keyboard users can read it). */
export function tip<E extends HTMLElement>(element: E, text: string): E {
  element.dataset["tip"] = text;
  if (element.tabIndex < 0 && !element.hasAttribute("tabindex")) element.tabIndex = 0;
  installTooltips(element.ownerDocument);
  return element;
}

/** Like tip(), without making the element focusable (table cells: the row is focusable). */
export function passiveTip<E extends HTMLElement>(element: E, text: string): E {
  element.dataset["tip"] = text;
  installTooltips(element.ownerDocument);
  return element;
}

function tipTarget(node: EventTarget | null): HTMLElement | null {
  return node instanceof Element ? node.closest<HTMLElement>("[data-tip]") : null;
}

function position(box: HTMLElement, target: HTMLElement, win: Window): void {
  const rect = target.getBoundingClientRect();
  const margin = 6;
  box.style.left = "0px";
  box.style.top = "0px";
  const width = box.offsetWidth;
  const height = box.offsetHeight;
  const left = Math.max(margin, Math.min(rect.left, win.innerWidth - width - margin));
  const below = rect.bottom + margin;
  const top = below + height <= win.innerHeight - margin ? below : Math.max(margin, rect.top - height - margin);
  box.style.left = `${Math.round(left)}px`;
  box.style.top = `${Math.round(top)}px`;
}

/** Installs the document's listeners once (tip() calls it). */
export function installTooltips(doc: Document): void {
  if (installed.has(doc)) return;
  installed.add(doc);
  const win = doc.defaultView;
  if (win === null) return;
  let box: HTMLElement | null = null;
  let current: HTMLElement | null = null;
  let timer: number | undefined;

  function ensureBox(): HTMLElement {
    if (box === null || !box.isConnected) {
      box = doc.createElement("div");
      box.id = TIP_ID;
      box.className = "ps-tooltip";
      box.setAttribute("role", "tooltip");
      box.hidden = true;
      doc.body.appendChild(box);
    }
    return box;
  }

  function hide(): void {
    win!.clearTimeout(timer);
    if (current !== null) current.removeAttribute("aria-describedby");
    current = null;
    if (box !== null) box.hidden = true;
  }

  function show(target: HTMLElement, delay: number): void {
    if (target === current) return;
    hide();
    current = target;
    timer = win!.setTimeout(() => {
      if (current !== target || !target.isConnected) return;
      const element = ensureBox();
      element.textContent = target.dataset["tip"] ?? "";
      element.hidden = false;
      target.setAttribute("aria-describedby", TIP_ID);
      position(element, target, win!);
    }, delay);
  }

  doc.addEventListener("mouseover", (event) => {
    const target = tipTarget(event.target);
    if (target !== null) show(target, SHOW_DELAY_MS);
    else if (current !== null) hide();
  });
  doc.addEventListener("focusin", (event) => {
    const target = tipTarget(event.target);
    if (target !== null) show(target, 0);
  });
  doc.addEventListener("focusout", hide);
  doc.addEventListener("scroll", hide, true);
  doc.addEventListener("keydown", (event) => {
    if (event.key === "Escape") hide();
  });
}
