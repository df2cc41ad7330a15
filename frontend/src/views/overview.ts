import { placeholderView } from "./placeholder";

export const overviewView = placeholderView(
  "overview",
  "Overview",
  "span",
  "Where a step's time goes (kernel, memcpy, communication, data loading, CPU), GPU utilization per device, " +
    "and recommendations drawn from the trace.",
);
