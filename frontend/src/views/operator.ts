import { placeholderView } from "./placeholder";

export const operatorView = placeholderView(
  "operator",
  "Operator",
  "span",
  "Which operators cost most on the host and the device, grouped by name, input shape or call stack.",
);
