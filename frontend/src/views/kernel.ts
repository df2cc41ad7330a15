import { placeholderView } from "./placeholder";

export const kernelView = placeholderView(
  "kernel",
  "Kernel",
  "span",
  "Which GPU kernels cost most, with their occupancy and Tensor Core use.",
);
