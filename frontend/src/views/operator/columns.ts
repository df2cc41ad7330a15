// Columns of the operator table, for each grouping; device and Tensor Core columns only
// when the span has device activity.
import type { OperatorGrouping, OperatorRow } from "../../api/operators";
import type { TableColumn } from "../../components/virtual_table";
import { formatCount, formatPercent } from "../../lib/format";
import { formatMicrosNumber } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { efficiencyOf } from "../../api/efficiency";
import { efficiencyColumns } from "../../components/efficiency_columns";

/** First frame of a call stack and how many more there are: "train.py(42): step (+5 frames)". */
export function stackSummary(stack: string | null): string {
  if (stack === null || stack === "") return "(no stack)";
  const frames = stack.split("\n").filter((frame) => frame.trim() !== "");
  const first = frames[0] ?? "";
  return frames.length > 1 ? `${first} (+${frames.length - 1} frame${frames.length === 2 ? "" : "s"})` : first;
}

/** Identifies a row within one grouping (names repeat across shapes and stacks). */
export function operatorRowKey(row: OperatorRow): string {
  return `${row.name}\u0000${row.input_shape ?? ""}\u0000${row.stack ?? ""}`;
}

function micros(
  id: string,
  label: string,
  tipText: string,
  value: (row: OperatorRow) => number,
): TableColumn<OperatorRow> {
  return {
    id,
    label,
    unit: "µs",
    tip: tipText,
    width: 110,
    align: "right",
    sortValue: value,
    text: (row) => formatMicrosNumber(value(row)),
  };
}

/** A Tensor Core share means something for eligible operators with device time (or any that used Tensor Cores). */
function shareApplies(row: OperatorRow, value: number): boolean {
  return row.device_total > 0 && (row.tc_eligible || value > 0);
}

function share(id: string, label: string, tipText: string, value: (row: OperatorRow) => number): TableColumn<OperatorRow> {
  return {
    id,
    label,
    tip: tipText,
    width: 84,
    align: "right",
    sortValue: (row) => (shareApplies(row, value(row)) ? value(row) : null),
    text: (row) => (shareApplies(row, value(row)) ? formatPercent(value(row)) : "—"),
  };
}

export function operatorColumns(groupBy: OperatorGrouping, hasDevice: boolean, efficiency = false): TableColumn<OperatorRow>[] {
  const columns: TableColumn<OperatorRow>[] = [
    {
      id: "name",
      label: "Operator",
      width: 260,
      grow: 3,
      firstDirection: "asc",
      sortValue: (row) => row.name,
      text: (row) => row.name,
      cellTip: (row) => row.name,
    },
  ];
  if (groupBy === "input_shape") {
    columns.push({
      id: "input_shape",
      label: "Input shapes",
      tip: DEF.inputShape,
      width: 200,
      grow: 2,
      firstDirection: "asc",
      sortValue: (row) => row.input_shape ?? "",
      text: (row) => row.input_shape ?? "",
      cellTip: (row) => row.input_shape ?? null,
    });
  }
  if (groupBy === "stack") {
    columns.push({
      id: "stack",
      label: "Call stack",
      tip: DEF.stack,
      width: 260,
      grow: 3,
      firstDirection: "asc",
      sortValue: (row) => row.stack ?? "",
      text: (row) => stackSummary(row.stack ?? null),
      cellTip: (row) => row.stack ?? null,
    });
  }
  columns.push({
    id: "calls",
    label: "Calls",
    tip: DEF.calls,
    width: 72,
    align: "right",
    sortValue: (row) => row.calls,
    text: (row) => formatCount(row.calls),
  });
  if (hasDevice) {
    columns.push(
      micros("device_self", "Device self", DEF.deviceSelf, (row) => row.device_self),
      micros("device_total", "Device total", DEF.deviceTotal, (row) => row.device_total),
    );
  }
  columns.push(
    micros("host_self", "Host self", DEF.hostSelf, (row) => row.host_self),
    micros("host_total", "Host total", DEF.hostTotal, (row) => row.host_total),
  );
  if (hasDevice) {
    columns.push(
      {
        id: "tc_eligible",
        label: "TC eligible",
        tip: DEF.tcEligible,
        width: 96,
        align: "center",
        sortValue: (row) => row.tc_eligible,
        text: (row) => (row.tc_eligible ? "yes" : "no"),
      },
      share("tc_self_share", "TC self", DEF.tcSelfShare, (row) => row.tc_self_share),
      share("tc_total_share", "TC total", DEF.tcTotalShare, (row) => row.tc_total_share),
    );
  }
  if (efficiency) columns.push(...efficiencyColumns((row: OperatorRow) => efficiencyOf(row)));
  return columns;
}
