// How devices are named in the views: GPUs as "GPU", other accelerators (Ascend NPUs...) by their own label.
import type { DeviceSummary } from "../api/overview";

/** Devices the trace calls GPUs ("GPU 0"); others are named by their label ("Ascend 1"). */
export function isGpu(device: DeviceSummary): boolean {
  return device.label.startsWith("GPU");
}

/** "GPU summary", "GPU summary (2 GPUs)", or "Device summary…" as soon as one device is not a GPU. */
export function summaryTitle(devices: readonly DeviceSummary[]): string {
  const noun = devices.every(isGpu) ? "GPU" : "Device";
  return devices.length === 1 ? `${noun} summary` : `${noun} summary (${devices.length} ${noun === "GPU" ? "GPUs" : "devices"})`;
}
