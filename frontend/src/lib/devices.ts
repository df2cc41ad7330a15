// How devices are named in the views: GPUs as "GPU", other accelerators by their family ("Ascend", "MTIA"),
// and "device" where devices of several kinds are spoken of together (the backend's views/quantities/devices.py).
import type { DeviceSummary } from "../api/overview";

/** Whether the backend calls the device a GPU (its kind), rather than another accelerator. */
export function isGpu(device: DeviceSummary): boolean {
  return device.kind === "GPU";
}

export type DeviceCardField =
  | "name"
  | "memory"
  | "computeCapability"
  | "numSms"
  | "utilization"
  | "smEfficiency"
  | "achievedOccupancy"
  | "tensorCoreShare"
  | "kernelTime"
  | "communicationTime";

/** The figures a device's card shows, in order. Compute capability, SMs, SM efficiency, occupancy and Tensor Cores
 * are GPU figures: another device (Ascend, MTIA) has none of them, so its card leaves them out rather than showing
 * "n/a". Communication time only for a device that ran collectives. */
export function deviceCardFields(device: DeviceSummary): readonly DeviceCardField[] {
  const gpu = isGpu(device);
  return [
    "name",
    "memory",
    ...(gpu ? (["computeCapability", "numSms"] as const) : []),
    "utilization",
    ...(gpu ? (["smEfficiency", "achievedOccupancy", "tensorCoreShare"] as const) : []),
    "kernelTime",
    ...(device.communication_time !== undefined && device.communication_time > 0 ? (["communicationTime"] as const) : []),
  ];
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
