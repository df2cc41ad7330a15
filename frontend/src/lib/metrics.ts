// Names, colours and definitions of the numbers the Overview, Operator and Kernel views show.
// The definitions are the tooltips: each says how the backend computes the number, so a
// reader can check it against the trace. Pure data.
import type { BreakdownCategory, StepSource } from "../api/overview";

export interface CategoryInfo {
  readonly label: string;
  /** Chart colour; the same in every chart and in both themes (readable on light and dark). */
  readonly color: string;
  readonly definition: string;
}

const PRIORITY_NOTE =
  "Each instant of a step is counted once, in the first category that covers it: " +
  "Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU Exec > Other.";

export const CATEGORY_INFO: Readonly<Record<BreakdownCategory, CategoryInfo>> = {
  kernel: {
    label: "Kernel",
    color: "#4e79a7",
    definition: "Kernel: time at least one GPU kernel (other than a communication kernel) runs, on any device or stream. " + PRIORITY_NOTE,
  },
  memcpy: {
    label: "Memcpy",
    color: "#f28e2b",
    definition: "Memcpy: time a GPU memory copy runs and no kernel does. " + PRIORITY_NOTE,
  },
  memset: {
    label: "Memset",
    color: "#edc948",
    definition: "Memset: time a GPU memset runs and no kernel or copy does. " + PRIORITY_NOTE,
  },
  communication: {
    label: "Communication",
    color: "#e15759",
    definition:
      "Communication: time a collective runs (collective kernels such as NCCL's, and host ranges of collectives " +
      "that launch no kernel, such as gloo:*) not covered by kernels, copies or memsets: the communication that " +
      "does not overlap computation. The host range that only enqueues an NCCL kernel counts as CPU time, not " +
      "communication (torch-tb-profiler counts it; HTA does not). " +
      PRIORITY_NOTE,
  },
  runtime: {
    label: "Runtime",
    color: "#b07aa1",
    definition:
      "Runtime: time in CUDA runtime and driver calls on the host (launches, synchronisation) while no kernel, " +
      "copy, memset or collective runs. " +
      PRIORITY_NOTE,
  },
  dataloader: {
    label: "DataLoader",
    color: "#59a14f",
    definition: "DataLoader: time inside enumerate(DataLoader)#... ranges (fetching the next batch) not covered above. " + PRIORITY_NOTE,
  },
  cpu_exec: {
    label: "CPU Exec",
    color: "#76b7b2",
    definition: "CPU Exec: time inside host operators, record_function ranges and Python frames that no category above covers. " + PRIORITY_NOTE,
  },
  other: {
    label: "Other",
    color: "#bab0ac",
    definition: "Other: the rest of the step time (nothing above is recorded running). " + PRIORITY_NOTE,
  },
};

export const STEP_SOURCE_TEXT: Readonly<Record<StepSource, string>> = {
  ProfilerStep: "step ranges recorded by the profiler (ProfilerStep#N, Paddle's ProfileStep#N, MindSpore's steps)",
  user: "ranges named by the step marker",
  span: "no step ranges found: the whole span counts as one step",
};

/** Tooltips of single metrics, by the key the views use. */
export const METRIC_DEFINITIONS = {
  stepTime:
    "Step time: from the start of the step's host range to the end of the device work it launched " +
    "(a step starts no earlier than the previous one ends).",
  meanStepTime: "Mean step time: the mean of the step times of the steps listed below.",
  stepSource:
    "Steps come from the profiler's step ranges (ProfilerStep#N, ProfileStep#N), from record_function ranges whose name is the step marker (name or name#N), " +
    "or, with neither, from the whole span.",
  stepCount: "Number of steps found in this span (trailing steps whose device work was not recorded are dropped).",
  stepMarker:
    "Name of a record_function range that marks one step (e.g. \"train_step\" matches \"train_step\" and \"train_step#3\"). " +
    "Leave empty to use ProfilerStep#N.",
  share: "Share of the mean step time: category mean / mean step time.",
  deviceName: "Device name from the trace's deviceProperties.",
  deviceMemory: "Total global memory of the device (deviceProperties.totalGlobalMem).",
  computeCapability: "CUDA compute capability (major.minor) from deviceProperties.",
  numSms: "Number of streaming multiprocessors (SMs) of the device.",
  utilization: "GPU utilization: time at least one kernel runs on this GPU / total step time (first step start to last step end).",
  deviceUtilization:
    "Utilization: time at least one kernel keeps this device busy / total step time (first step start to last step " +
    "end). A collective whose own tasks the device's streams show (an Ascend HCCL operator) is busy while they copy " +
    "or reduce, not while they wait for a peer (as on the Analyses page).",
  smEfficiency:
    "Est. SM efficiency: duration-weighted min(sum of blocks per SM of concurrent kernels, 1) over the steps: " +
    "how much of the SMs the running kernels could occupy.",
  achievedOccupancy:
    "Est. achieved occupancy: mean of the profiler's per-kernel estimate (active warps per SM / maximum warps per SM), " +
    "weighted by each kernel's time within the steps.",
  tensorCoreShare: "Tensor Core share: kernel time of Tensor-Core kernels / all kernel time.",
  kernelTime:
    "Kernel time: sum of the durations of the computation kernels on this device within the steps (collectives are " +
    "communication time), the kernels of the breakdown's Kernel category.",
  communicationTime: "Communication time: sum of the durations of the collective kernels on this device within the steps.",
  benchmarkSteps: "Steps measured (the steps of the breakdown).",
  minStepTime: "Shortest step time.",
  maxStepTime: "Longest step time.",
  stepsPerSecond: "Steps per second: 1 / mean step time.",
  readerCost: "Reader cost (Paddle's term): mean DataLoader time per step.",
  dataloaderShare: "DataLoader share: mean DataLoader time / mean step time.",
  batchSize: "Batch size, from the writer's span manifest (unknown for traces written by torch's handler).",
  samplesPerSecond: "Samples per second: batch size × steps per second (needs the batch size).",
  calls: "Number of calls (occurrences) in the span.",
  hostSelf: "Host self time: the operator's host duration minus the durations of its direct children (nested ops, Python frames).",
  hostTotal: "Host total time: the operator's host duration, children included (an op nested in an op of the same name is counted once).",
  deviceSelf: "Device self time: duration of the kernels, copies and memsets this operator launched itself.",
  deviceTotal: "Device total time: device self time plus that of every operator nested inside it.",
  tcEligible: "Tensor Core eligible: the operator (convolution, matmul, ...) could run on Tensor Cores with a suitable dtype.",
  tcSelfShare: "Tensor Core self share: device self time in Tensor Core kernels / device self time.",
  tcTotalShare: "Tensor Core total share: device total time in Tensor Core kernels / device total time.",
  inputShape: "Input shapes of the call (recorded with record_shapes=True).",
  stack: "Python call stack of the call (recorded with with_stack=True), innermost frame first.",
  kernelTotal: "Total duration of all calls of the kernel.",
  kernelMean: "Mean duration per call.",
  kernelMin: "Shortest call.",
  kernelMax: "Longest call.",
  blocksPerSm: "Mean blocks per SM: duration-weighted mean of grid blocks / number of SMs (from the trace's kernel args).",
  kernelOccupancy:
    "Est. achieved occupancy: duration-weighted mean of the profiler's per-kernel estimate (kernel arg 'est. achieved occupancy %').",
  tensorCores: "Tensor Cores used: the kernel runs on Tensor Cores (recognised by known Tensor Core kernel name patterns).",
  kernelOp: "The operator that launched the kernel (via the launch's External id).",
  allKernelTime:
    "All kernel time in the span: sum of kernel durations on every device and stream (collectives included), " +
    "the sum of the GPU summary's kernel time. Not the Overview's Kernel category: that is the time at least one " +
    "non-collective kernel runs within the steps, concurrent kernels counted once (HTA's computation time).",
} as const;

export type MetricKey = keyof typeof METRIC_DEFINITIONS;
