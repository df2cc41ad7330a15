// A hand-made call-stack flame graph shared by the flame graph's and the Call stacks page's tests.
import { flameGraphData, type FlameGraphData } from "../src/api/stacks";

/**
 * all (100)
 * ├─ main (90, self 10)
 * │  ├─ forward (50)  ── aten::mm (30)
 * │  └─ backward (30) ── aten::mm (20)
 * └─ idle (10)
 */
export function handMadeFlameGraph(): FlameGraphData {
  return flameGraphData({
    weight: "host",
    unit: "us",
    total: 100,
    names: ["all", "main", "forward", "backward", "aten::mm", "idle"],
    nodes: {
      parent: [-1, 0, 1, 1, 2, 3, 0],
      name: [0, 1, 2, 3, 4, 4, 5],
      self: [0, 10, 20, 10, 30, 20, 10],
      total: [100, 90, 50, 30, 30, 20, 10],
      calls: [0, 1, 2, 2, 4, 2, 1],
    },
  });
}
