// The one way this frontend builds DOM. Text always goes in as text nodes: strings that come
// from traces (run, worker, kernel names, error messages) are never parsed as HTML.

export type Child = Node | string | null | undefined | false;

export interface ElementProps {
  readonly className?: string;
  /** Stable hook for end-to-end tests: `data-testid`. */
  readonly testId?: string;
  /** Other attributes, set with setAttribute (values are plain text). */
  readonly attrs?: Readonly<Record<string, string>>;
  readonly hidden?: boolean;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.className !== undefined) element.className = props.className;
  if (props.testId !== undefined) element.dataset["testid"] = props.testId;
  if (props.hidden === true) element.hidden = true;
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value);
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  while (parent.firstChild !== null) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** Adds a stylesheet to the document once (by its element id); later calls do nothing. */
export function injectStyleOnce(doc: Document, id: string, css: string): void {
  if (doc.getElementById(id) !== null) return;
  const style = doc.createElement("style");
  style.id = id;
  style.textContent = css;
  doc.head.appendChild(style);
}
