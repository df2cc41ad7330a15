import { placeholderView } from "./placeholder";

export const compareView = placeholderView(
  "compare",
  "Compare",
  "any",
  "Two spans side by side: the step breakdown and the operators and kernels that changed most.",
);
