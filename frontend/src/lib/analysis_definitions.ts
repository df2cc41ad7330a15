// How the numbers of the Memory, Distributed, Call stacks and Modules views are computed:
// the texts of their tooltips (like metrics.ts for the other views). Pure data.

export const MEMORY_DEFINITIONS = {
  allocated:
    "Allocated: bytes held by live tensors on the device, as the allocator reports after each [memory] event " +
    "(Total Allocated).",
  reserved:
    "Reserved: bytes the caching allocator holds from the device, allocated or not (Total Reserved; CUDA only).",
  peak: "Peak allocated: the highest allocated value of the device in the span, and when it was reached.",
  peakReserved: "Peak reserved: the highest reserved value of the device in the span.",
  capacity: "Device memory (deviceProperties.totalGlobalMem).",
  events: "Memory events ([memory] instants: allocations and frees) recorded for the device.",
  address: "Address of the block the allocator returned.",
  size: "Size of the allocation.",
  operator: "The innermost operator running on the allocating thread when the allocation happened.",
  allocTime: "When the block was allocated, from the start of the span.",
  freeTime: "When the block was freed (the next event at the same address on the device), from the start of the span.",
  lifetime: "Free time minus allocation time.",
  neverFreed: "Never freed: the span ends before a free of this block is recorded (still live, or freed later).",
  opCalls: "Calls of the operator in the span (all of them, allocating or not).",
  allocations: "Allocations made by the operator itself (not by operators nested in it).",
  frees: "Frees made by the operator itself.",
  selfBytes: "Self bytes: bytes the operator allocated minus bytes it freed, its own events only.",
  totalBytes: "Total bytes: like self bytes, including every operator nested inside it.",
  selfAllocBytes: "Self allocated: bytes the operator allocated itself (frees not subtracted).",
  totalAllocBytes: "Total allocated: bytes allocated by the operator and every operator nested inside it.",
  selfPeakBytes:
    "Peak self: bytes the operator allocated itself that are still live when the device reaches its peak — " +
    "its share of the peak. The self column adds up to what the listed operators hold at the peak.",
  totalPeakBytes: "Peak total: like peak self, including allocations of operators nested inside it.",
} as const;

export const DISTRIBUTED_DEFINITIONS = {
  stepTime: "Step time: mean duration of the rank's steps in the chosen span.",
  compute:
    "Computation: time device work other than collectives runs (kernels, copies, memsets); on CPU-only runs, " +
    "host operators, less each thread's own time in a collective. Mean per step, overlap included.",
  communication:
    "Communication: time a collective runs — collective kernels (NCCL), and the host ranges of collectives that " +
    "launch no kernel (Gloo) on GPU and CPU-only runs alike. Mean per step, overlap included; the same number as " +
    "the Overview's Communication plus this overlap.",
  overlap:
    "Overlap: communication while computation runs, mean per step. HTA counts computation kernels only (not " +
    "copies). On CPU-only runs a thread running a collective waits for it, while other threads' operators " +
    "compute: the main thread's backward overlaps a Gloo thread's all-reduce, as torch-tb-profiler counts it.",
  other: "Other: the rest of the step (neither computation nor communication).",
  wait:
    "Wait: the part of the communication spent waiting for the last rank to arrive. Collectives are matched across " +
    "ranks by name and order (the i-th call of a collective on every rank is one collective).",
  transfer:
    "Transfer: communication time minus wait — time data actually moves (torch-tb-profiler takes instead the " +
    "fastest rank's time of each call).",
  collectiveCalls: "Collective calls of the rank in the span.",
  calls: "Calls of the collective, over every rank.",
  messageSize:
    "Mean message size: bytes over calls, from the operator that launched the collective (record_param_comms' " +
    "element count and dtype, else its input shapes); unknown when not recorded.",
  total: "Total: the sum of the collective's call durations over every rank (concurrent calls each count).",
  mean: "Mean duration per call.",
  collectiveWait: "Time the calls spent waiting for the last rank, over every rank.",
  collectiveTransfer: "Total minus wait.",
  bandwidth: "Effective bandwidth: bytes moved per second of transfer time (waiting excluded), decimal GB/s.",
  busbw:
    "Bus bandwidth (rank): message bytes (the larger of input and output) over each rank's own call durations, " +
    "waiting for peers included, times 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and " +
    "all-to-all, 1 for broadcast, reduce and send/receive (n = the group's ranks): what each link carried, " +
    "comparable with the link's peak whatever n.",
  transferBusbw:
    "Bus bandwidth (transfer): the same over each collective's shortest duration across the ranks (the i-th call of " +
    "every rank is one collective): closest to the transfer alone, as the last rank to arrive waits least.",
  straggler:
    "The straggler is the rank with the longest mean step time, compared with the median step time of the other ranks.",
} as const;

export const STACKS_DEFINITIONS = {
  host:
    "Host time: a frame's width is its host duration (children included); its self time is that minus its children. " +
    "Frames are Python functions, operators and record_function ranges, merged by call path.",
  device:
    "Device time: a frame's width is the GPU time (kernels, copies, memsets) launched by it and everything it calls.",
  total: "Total: the frame's time including everything it calls.",
  self: "Self: the frame's own time, without what it calls.",
  calls: "Calls: how many ranges were merged into this frame.",
} as const;

/** Where the flame graph's Python frames come from (the flame graph answer's stacks_from). */
export const STACKS_SOURCES = {
  python_frames: "Python frames: the trace's Python function events (recorded with with_stack=True).",
  call_stacks:
    "Python frames: the operators' recorded call stacks (their “Call stack” argument, as older profilers write it). " +
    "The trace has no Python function events: each stack is put above the outermost operator that carries it, " +
    "with no self time of its own.",
  none: "The trace records no Python stacks: only operators and annotations are shown.",
} as const;

/** The sentence that says where the Python frames come from; with none, the answer's note (how to record them). */
export function stacksSourceText(stacksFrom: keyof typeof STACKS_SOURCES | null, note: string | null): string | null {
  if (stacksFrom === null) return null;
  return stacksFrom === "none" && note !== null && note !== "" ? note : STACKS_SOURCES[stacksFrom];
}

export const MODULES_DEFINITIONS = {
  calls: "Calls of the module's forward in the span.",
  forwardHost: "Forward host: host duration of the module's forward calls (nested modules included).",
  forwardDevice: "Forward device: GPU time launched inside the module's forward calls.",
  backwardHost:
    "Backward host: host duration of the autograd operators whose forward operator ran inside the module " +
    "(nested modules included, like forward; paired by the profiler's forward→backward flows, or by sequence number).",
  backwardDevice: "Backward device: GPU time launched by those backward operators (nested modules included).",
  root: "(model): the sum of the top-level modules.",
} as const;
