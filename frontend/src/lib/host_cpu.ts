// What the Host CPU chart says about its readings. Pure.
import type { HostCpu } from "../api/overview";
import { formatCount } from "./format";
import { formatTime } from "./metric_format";

/** Why a span has one reading (or a few): it was shorter than the sampling interval. */
export function fewSamplesText(cpu: HostCpu): string | null {
  const count = cpu.samples?.time.length ?? 0;
  const interval = cpu.interval;
  const shorter = interval !== null && cpu.duration < interval;
  if (count > 1 && !shorter) return null;
  const reading = count === 1 ? "one reading" : `${formatCount(count)} readings`;
  if (shorter && interval !== null) {
    return (
      `${reading[0]?.toUpperCase()}${reading.slice(1)}: the span (${formatTime(cpu.duration)}) was shorter than the sampling ` +
      `interval (${formatTime(interval)}), so the figures are means over the whole span. Sample more often ` +
      "(trace_handler(..., cpu_sample_interval=0.01)) to see the CPU over time."
    );
  }
  return count === 1 ? "One reading: the figures are means over the whole span." : null;
}
