// What a view says when it has nothing to show: why (what the span lacks) and what would make
// it appear (how to profile), in the words of the framework that wrote the span. Pure text.

export interface EmptyState {
  readonly title: string;
  /** What the span lacks. */
  readonly why: string;
  /** What would make the view appear. */
  readonly how: string;
}

function isPaddle(framework: string | null | undefined): boolean {
  return framework === "paddle";
}

function isMindSpore(framework: string | null | undefined): boolean {
  return framework === "mindspore";
}

/** Kernel view (and the overview's GPU part): no device activity in the span. */
export function noKernelsState(framework: string | null | undefined): EmptyState {
  const how = isPaddle(framework)
    ? "Profile on a GPU with paddle.profiler.Profiler(targets=[ProfilerTarget.CPU, ProfilerTarget.GPU])."
    : isMindSpore(framework)
      ? "Profile on a GPU or Ascend device with MindSpore's Profiler, which records the device timeline."
      : "Profile on a GPU with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]).";
  return {
    title: "This span has no GPU kernels",
    why: "The trace records no kernel events: it is a CPU-only run, or the profiler did not record device activity.",
    how: `${how} The Operator view shows the host time of this span meanwhile.`,
  };
}

/** The overview of a span without a GPU: where the GPU summary would be. */
export function noGpuState(framework: string | null | undefined): EmptyState {
  const kernels = noKernelsState(framework);
  return {
    title: "No GPU in this span",
    why: "The trace has no device activity, so there is no GPU utilization, SM efficiency or Tensor Core share to show; the breakdown below is all host time.",
    how: kernels.how.replace(" The Operator view shows the host time of this span meanwhile.", ""),
  };
}

/** Distributed view: fewer than two workers with a span at this index. */
export function singleWorkerState(workers: number): EmptyState {
  return {
    title: "Nothing distributed to show",
    why:
      workers <= 1
        ? "This run has a single worker (rank): there are no ranks to compare, no collectives to line up and no straggler."
        : "Fewer than two workers of this run have a span at this position.",
    how:
      "Profile every rank of the job into the same run: trace_handler(\"runs\", run=\"my_job\") in each process " +
      "(each rank becomes a worker, rank0, rank1, …), or import each rank's trace with profscope import --run my_job.",
  };
}

/** Operator view: no framework operators. */
export function noOperatorsState(framework: string | null | undefined): EmptyState {
  return {
    title: "No operators in this span",
    why: "The trace records no framework operators (torch's cpu_op events, Paddle's operator ranges).",
    how: isPaddle(framework)
      ? "Profile with paddle.profiler.Profiler(targets=[ProfilerTarget.CPU, …]) around the training steps."
      : "Profile the training steps with torch.profiler.profile(activities=[ProfilerActivity.CPU, …]); a generic Chrome trace has operators only where it has ranges on host threads.",
  };
}
