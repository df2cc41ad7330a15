import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  filterRows,
  formatSortParam,
  parseSortParam,
  rowAfterKey,
  scrollToReveal,
  sortOnHeaderClick,
  sortRows,
  stickyOffsets,
  visibleWindow,
} from "../src/lib/table_model";

interface Row {
  readonly name: string;
  readonly time: number | null;
  readonly flag: boolean;
}

const rows: Row[] = [
  { name: "aten::mm", time: 30, flag: true },
  { name: "aten::add", time: null, flag: false },
  { name: "aten::conv2d", time: 120, flag: true },
  { name: "Aten::Copy_", time: Number.NaN, flag: false },
  { name: "aten::add_", time: 30, flag: false },
];

describe("sortRows", () => {
  test("numbers descending and ascending; unknown values last in both directions", () => {
    const desc = sortRows(rows, (row) => row.time, "desc").map((row) => row.name);
    assert.deepEqual(desc, ["aten::conv2d", "aten::mm", "aten::add_", "aten::add", "Aten::Copy_"]);
    const asc = sortRows(rows, (row) => row.time, "asc").map((row) => row.name);
    assert.deepEqual(asc, ["aten::mm", "aten::add_", "aten::conv2d", "aten::add", "Aten::Copy_"]);
  });

  test("is stable: equal values keep their input order", () => {
    const desc = sortRows(rows, (row) => row.time, "desc");
    assert.ok(desc.indexOf(rows[0]!) < desc.indexOf(rows[4]!));
  });

  test("strings ignore case and compare digits as numbers", () => {
    const names = sortRows(rows, (row) => row.name, "asc").map((row) => row.name);
    assert.deepEqual(names, ["aten::add", "aten::add_", "aten::conv2d", "Aten::Copy_", "aten::mm"]);
    const numbered = sortRows([{ n: "step 10" }, { n: "step 9" }], (row) => row.n, "asc").map((row) => row.n);
    assert.deepEqual(numbered, ["step 9", "step 10"]);
  });

  test("text order is the CSV export's (tests/test_export.py has the same example)", () => {
    const names = ["b10", "B2", "a", "b1", "_x", "b02", "A"].map((n) => ({ n }));
    assert.deepEqual(
      sortRows(names, (row) => row.n, "asc").map((row) => row.n),
      ["_x", "a", "A", "b1", "B2", "b02", "b10"],
    );
  });

  test("booleans sort true after false ascending", () => {
    const flags = sortRows(rows, (row) => row.flag, "desc").map((row) => row.flag);
    assert.deepEqual(flags, [true, true, false, false, false]);
  });

  test("does not modify its input", () => {
    const copy = [...rows];
    sortRows(rows, (row) => row.name, "desc");
    assert.deepEqual(rows, copy);
  });
});

describe("filterRows", () => {
  test("matches substrings, ignoring case; every word must match", () => {
    const names = (query: string) => filterRows(rows, query, (row) => row.name).map((row) => row.name);
    assert.deepEqual(names("ADD"), ["aten::add", "aten::add_"]);
    assert.deepEqual(names("  aten   copy "), ["Aten::Copy_"]);
    assert.deepEqual(names("nothing"), []);
  });

  test("an empty query returns the same array", () => {
    assert.equal(filterRows(rows, "   ", (row) => row.name), rows);
  });

  test("stays fast on 20,000 rows", () => {
    const many = Array.from({ length: 20000 }, (_, i) => ({ name: `op_${i}` }));
    const started = performance.now();
    const found = filterRows(many, "op_1999", (row) => row.name);
    const sorted = sortRows(many, (row) => row.name, "desc");
    assert.deepEqual(found.map((row) => row.name), ["op_1999", "op_19990", "op_19991", "op_19992", "op_19993", "op_19994", "op_19995", "op_19996", "op_19997", "op_19998", "op_19999"]);
    assert.equal(sorted[0]?.name, "op_19999");
    assert.ok(performance.now() - started < 1000);
  });
});

describe("sort parameter", () => {
  const columns = ["name", "host_self"];
  const fallback = { column: "host_self", direction: "desc" } as const;

  test("round-trips", () => {
    const state = { column: "name", direction: "asc" } as const;
    assert.deepEqual(parseSortParam(formatSortParam(state), columns, fallback), state);
  });

  test("unknown columns and junk fall back", () => {
    assert.deepEqual(parseSortParam("device_self:desc", columns, fallback), fallback);
    assert.deepEqual(parseSortParam("name:sideways", columns, fallback), fallback);
    assert.deepEqual(parseSortParam(null, columns, fallback), fallback);
  });
});

describe("visibleWindow", () => {
  test("at the top: the rows that fit plus overscan below", () => {
    assert.deepEqual(visibleWindow(0, 280, 28, 10000, 5), { start: 0, end: 15 });
  });

  test("scrolled into the middle: overscan on both sides", () => {
    // Rows 100..109 are in view (row 100 starts at 2800 px).
    assert.deepEqual(visibleWindow(2800, 280, 28, 10000, 5), { start: 95, end: 115 });
    // A partly visible row counts.
    assert.deepEqual(visibleWindow(2810, 280, 28, 10000, 0), { start: 100, end: 111 });
  });

  test("at the end: clamped to the row count", () => {
    assert.deepEqual(visibleWindow(28 * 9990, 280, 28, 10000, 5), { start: 9985, end: 10000 });
    assert.deepEqual(visibleWindow(1e9, 280, 28, 10000, 5), { start: 9994, end: 10000 });
  });

  test("a window never holds more than a viewport and two overscans, whatever the row count", () => {
    for (const count of [1, 50, 10000, 1000000]) {
      const window = visibleWindow(count * 14, 520, 28, count, 8);
      assert.ok(window.end - window.start <= Math.ceil(520 / 28) + 1 + 16, `count ${count}`);
      assert.ok(window.start >= 0 && window.end <= count && window.start < window.end);
    }
  });

  test("no rows, no window; bad input is treated as zero", () => {
    assert.deepEqual(visibleWindow(0, 280, 28, 0), { start: 0, end: 0 });
    assert.deepEqual(visibleWindow(Number.NaN, Number.NaN, 28, 3, 0), { start: 0, end: 1 });
  });
});

test("scrollToReveal scrolls only as far as needed", () => {
  assert.equal(scrollToReveal(5, 0, 280, 28), null);
  assert.equal(scrollToReveal(10, 0, 280, 28), 28);
  assert.equal(scrollToReveal(2, 100, 280, 28), 56);
});

describe("the table's header, pinned columns and keys", () => {
  test("a header click reverses the sorted column, else sorts by its first direction (largest first by default)", () => {
    const byTotal = { column: "total", direction: "desc" } as const;
    assert.deepEqual(sortOnHeaderClick(byTotal, "total"), { column: "total", direction: "asc" });
    assert.deepEqual(sortOnHeaderClick({ column: "total", direction: "asc" }, "total"), byTotal);
    assert.deepEqual(sortOnHeaderClick(byTotal, "calls"), { column: "calls", direction: "desc" });
    assert.deepEqual(sortOnHeaderClick(byTotal, "name", "asc"), { column: "name", direction: "asc" });
  });

  test("each pinned column sits at the widths before it", () => {
    assert.deepEqual(stickyOffsets([112, 160, 96, 64], 2), [0, 112]);
    assert.deepEqual(stickyOffsets([112, 160], 0), []);
  });

  test("keys move the focus by a row, a page, or to the ends, pages and ends within the rows", () => {
    assert.equal(rowAfterKey("ArrowDown", 4, 9, 100), 5);
    assert.equal(rowAfterKey("ArrowUp", 0, 9, 100), -1); // outside: the table does not move
    assert.equal(rowAfterKey("PageDown", 95, 9, 100), 99);
    assert.equal(rowAfterKey("PageUp", 4, 9, 100), 0);
    assert.equal(rowAfterKey("Home", 40, 9, 100), 0);
    assert.equal(rowAfterKey("End", 40, 9, 100), 99);
    assert.equal(rowAfterKey("Enter", 40, 9, 100), undefined);
  });
});
