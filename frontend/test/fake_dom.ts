// The little of the DOM that components/dom.ts uses (createElement, text nodes, children,
// attributes, dataset), enough to check what a component puts into a host element without a
// browser. Installed as `globalThis.document` by the tests that need it.

export class FakeNode {
  parentNode: FakeElement | null = null;
  constructor(private readonly text = "") {}

  get textContent(): string {
    return this.text;
  }
}

export class FakeElement extends FakeNode {
  readonly childNodes: FakeNode[] = [];
  readonly dataset: Record<string, string> = {};
  readonly attributes = new Map<string, string>();
  className = "";
  hidden = false;
  disabled = false;
  readonly style: Record<string, string> = {};

  constructor(readonly tagName: string) {
    super();
  }

  get firstChild(): FakeNode | null {
    return this.childNodes[0] ?? null;
  }

  get children(): FakeElement[] {
    return this.childNodes.filter((node): node is FakeElement => node instanceof FakeElement);
  }

  override get textContent(): string {
    return this.childNodes.map((node) => node.textContent).join("");
  }

  override set textContent(text: string) {
    for (const node of this.childNodes.splice(0)) node.parentNode = null;
    this.appendChild(new FakeNode(text));
  }

  appendChild<N extends FakeNode>(node: N): N {
    node.parentNode?.removeChild(node);
    node.parentNode = this;
    this.childNodes.push(node);
    return node;
  }

  append(...nodes: FakeNode[]): void {
    for (const node of nodes) this.appendChild(node);
  }

  removeChild<N extends FakeNode>(node: N): N {
    const index = this.childNodes.indexOf(node);
    if (index < 0) throw new Error("not a child");
    this.childNodes.splice(index, 1);
    node.parentNode = null;
    return node;
  }

  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }

  /** Listeners are kept, not dispatched: enough for components that wire clicks when they are built. */
  readonly listeners: [string, unknown][] = [];
  addEventListener(type: string, listener: unknown): void {
    this.listeners.push([type, listener]);
  }

  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }

  get ownerDocument(): unknown {
    return (globalThis as { document?: unknown }).document;
  }

  /** Calls the element's click listeners, as a click would. */
  click(): void {
    for (const [type, listener] of this.listeners) if (type === "click") (listener as () => void)();
  }

  /** The first descendant (or this element) with this `data-testid`. */
  findByTestId(testId: string): FakeElement | null {
    if (this.dataset["testid"] === testId) return this;
    for (const child of this.children) {
      const found = child.findByTestId(testId);
      if (found !== null) return found;
    }
    return null;
  }
}

export function installFakeDocument(): void {
  const head = new FakeElement("head");
  const fakeDocument = {
    head,
    createElement: (tag: string) => new FakeElement(tag),
    createTextNode: (text: string) => new FakeNode(text),
    getElementById: (id: string) => head.children.find((child) => child.getAttribute("id") === id || (child as { id?: string }).id === id) ?? null,
  };
  (globalThis as { document?: unknown }).document = fakeDocument;
}

/** A fake element typed as the real thing, for code that takes an HTMLElement. */
export function fakeHost(): { fake: FakeElement; host: HTMLElement } {
  const fake = new FakeElement("div");
  return { fake, host: fake as unknown as HTMLElement };
}
