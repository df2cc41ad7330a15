// How devices are named in the views: GPUs as "GPU", other accelerators by their family ("Ascend", "MTIA"),
// and "device" where devices of several kinds are spoken of together (the backend's views/quantities/devices.py).
import type { DeviceSummary } from "../api/overview";

/** Whether the backend calls the device a GPU (its kind), rather than another accelerator. */
export function isGpu(device: DeviceSummary): boolean {
  return device.kind === "GPU";
}

/** "GPU summary", "GPU summary (2 GPUs)", or "Device summary…" as soon as one device is not a GPU. */
export function summaryTitle(devices: readonly DeviceSummary[]): string {
  const noun = devices.every(isGpu) ? "GPU" : "Device";
  return devices.length === 1 ? `${noun} summary` : `${noun} summary (${devices.length} ${noun === "GPU" ? "GPUs" : "devices"})`;
}

/** "GPU kernels", "Ascend kernels", "MTIA kernels", or "Device kernels" (the kernels answer's device_kind). */
export function kernelsTitle(deviceKind: string): string {
  return deviceKind === "" || deviceKind.toLowerCase() === "device" ? "Device kernels" : `${deviceKind} kernels`;
}
