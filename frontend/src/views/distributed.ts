import { placeholderView } from "./placeholder";

export const distributedView = placeholderView(
  "distributed",
  "Distributed",
  "run",
  "Compute, communication and overlap per rank, the collectives, and which rank is the straggler.",
);
