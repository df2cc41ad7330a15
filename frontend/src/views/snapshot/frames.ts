// A snapshot's stacks as the page lists them: every frame with its kind (yours, Python, C++), or a group's top three.
import type { SnapshotFrame } from "../../api/snapshot";
import { el } from "../../components/dom";
import { frameText } from "../../lib/snapshot_model";

export function frameList(frames: readonly SnapshotFrame[], testId: string): HTMLElement {
  return el(
    "ol",
    { className: "ps-frames", testId },
    ...frames.map((frame) =>
      el(
        "li",
        { className: `ps-frame-${frame.kind}` },
        el("span", { className: "ps-frame-kind" }, frame.kind === "cpp" ? "C++" : frame.kind === "user" ? "yours" : "Python"),
        frameText(frame),
      ),
    ),
  );
}

export function topFramesText(group: { readonly frames: readonly SnapshotFrame[] }): string {
  return group.frames.slice(0, 3).map(frameText).join(" ← ");
}
