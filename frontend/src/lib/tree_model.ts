// Flattening a tree (given as parent indices) into the rows a tree table shows: expanded
// nodes' children follow them, indented by depth. Pure.

export interface TreeIndex {
  /** children[i]: the children of node i, in the order given. */
  readonly children: readonly (readonly number[])[];
  /** The nodes without a valid parent (normally just node 0). */
  readonly roots: readonly number[];
}

/** Children lists from parent indices; a parent must come before its child (else: a root). */
export function indexTree(parent: readonly number[]): TreeIndex {
  const children: number[][] = parent.map(() => []);
  const roots: number[] = [];
  parent.forEach((p, node) => {
    if (Number.isInteger(p) && p >= 0 && p < node) children[p]!.push(node);
    else roots.push(node);
  });
  return { children, roots };
}

export interface TreeRow {
  readonly node: number;
  /** 0 for a root. */
  readonly depth: number;
  readonly hasChildren: boolean;
  readonly expanded: boolean;
}

/**
 * The visible rows: every root, then, for an expanded node, its children (sorted by `compare`
 * when given, else in their original order), depth first.
 */
export function flattenTree(
  index: TreeIndex,
  expanded: ReadonlySet<number>,
  compare?: (a: number, b: number) => number,
): TreeRow[] {
  const rows: TreeRow[] = [];
  const order = (nodes: readonly number[]): readonly number[] => (compare === undefined ? nodes : [...nodes].sort(compare));
  // Iterative: deep module trees must not overflow the call stack.
  const stack: { node: number; depth: number }[] = [...order(index.roots)].reverse().map((node) => ({ node, depth: 0 }));
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    const kids = index.children[node] ?? [];
    const isOpen = kids.length > 0 && expanded.has(node);
    rows.push({ node, depth, hasChildren: kids.length > 0, expanded: isOpen });
    if (isOpen) {
      const sorted = order(kids);
      for (let i = sorted.length - 1; i >= 0; i -= 1) stack.push({ node: sorted[i]!, depth: depth + 1 });
    }
  }
  return rows;
}

/** The nodes to expand so that every node down to `depth` (roots are depth 0) is visible. */
export function expandedToDepth(index: TreeIndex, depth: number): Set<number> {
  const out = new Set<number>();
  let level: readonly number[] = index.roots;
  for (let d = 0; d < depth && level.length > 0; d += 1) {
    const next: number[] = [];
    for (const node of level) {
      const kids = index.children[node] ?? [];
      if (kids.length > 0) {
        out.add(node);
        next.push(...kids);
      }
    }
    level = next;
  }
  return out;
}

/** Every node with children (for "expand all"). */
export function allParents(index: TreeIndex): Set<number> {
  const out = new Set<number>();
  index.children.forEach((kids, node) => {
    if (kids.length > 0) out.add(node);
  });
  return out;
}
