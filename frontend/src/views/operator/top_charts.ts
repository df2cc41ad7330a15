// The Operator page's top-10 charts of the rows the filter keeps (all rows without a filter): by device self time
// when the span has device work, and by host self time. A bar's click opens that row's drill-down.
import type { OperatorRow, OperatorsData } from "../../api/operators";
import { createBarList } from "../../components/bars";
import { el } from "../../components/dom";
import { topN } from "../../lib/chart_data";
import { formatTime } from "../../lib/metric_format";
import { METRIC_DEFINITIONS as DEF } from "../../lib/metrics";
import { rowLabel } from "./model";

const TOP_COUNT = 10;
const DEVICE_COLOR = "#4e79a7";
const HOST_COLOR = "#76b7b2";

export function topCharts(data: OperatorsData, rows: readonly OperatorRow[], filter: string, onSelect: (row: OperatorRow) => void): HTMLElement {
  const matching = filter.trim() !== "" ? ` matching “${filter.trim()}”` : "";
  const chart = (title: string, tipText: string, testId: string, color: string, value: (row: OperatorRow) => number) => {
    const top = topN(rows, value, TOP_COUNT);
    return createBarList(
      top.map((row) => ({
        label: rowLabel(row, data.group_by),
        value: value(row),
        valueText: formatTime(value(row)),
        tip: `${rowLabel(row, data.group_by)}\n${formatTime(value(row))} in ${row.calls} calls`,
      })),
      {
        title: `${title}${matching}`,
        titleTip: tipText,
        testId,
        color,
        emptyText: matching !== "" ? "No operator matches the filter." : "No operator time recorded.",
        onSelect: (index) => {
          const row = top[index];
          if (row !== undefined) onSelect(row);
        },
      },
    );
  };
  return el(
    "div",
    { className: "ps-row" },
    data.has_device
      ? chart(`Top ${TOP_COUNT} by device self time`, DEF.deviceSelf, "top-operators-device", DEVICE_COLOR, (row) => row.device_self)
      : null,
    chart(`Top ${TOP_COUNT} by host self time`, DEF.hostSelf, "top-operators-host", HOST_COLOR, (row) => row.host_self),
  );
}
