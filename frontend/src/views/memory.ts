import { placeholderView } from "./placeholder";

export const memoryView = placeholderView(
  "memory",
  "Memory",
  "span",
  "How much memory each device holds over time, when the peak is, and which operators allocated it.",
);
