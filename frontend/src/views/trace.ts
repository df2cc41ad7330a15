import { placeholderView } from "./placeholder";

export const traceView = placeholderView(
  "trace",
  "Trace",
  "span",
  "The timeline of CPU threads and GPU streams, with search, selection details and flows from launches to kernels.",
);
