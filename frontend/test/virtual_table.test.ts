// A table cell whose text is cut shows its whole text in a tooltip (components/virtual_table.ts tipCutCell),
// whatever the table: the kernel sequences' operators ("autograd::engine::ev…"), the streams of an Ascend trace.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { tipCutCell, type CellLike } from "../src/components/virtual_table";

function cell(text: string, scrollWidth: number, clientWidth: number, dataset: Record<string, string> = {}): CellLike & { dataset: Record<string, string> } {
  return { textContent: text, scrollWidth, clientWidth, dataset };
}

describe("cut cells", () => {
  test("a cut text becomes the cell's tooltip", () => {
    const name = "autograd::engine::evaluate_function: ConvolutionBackward0";
    const cut = cell(name, 412, 170);
    tipCutCell(cut);
    assert.equal(cut.dataset["tip"], name);
  });

  test("a text that fits has no tooltip, and loses the one it had when it fits again", () => {
    const fits = cell("aten::mm", 60, 170);
    tipCutCell(fits);
    assert.equal(fits.dataset["tip"], undefined);
    const recycled = cell("Ascend 0 · Stream 2", 140, 96);
    tipCutCell(recycled);
    assert.equal(recycled.dataset["tip"], "Ascend 0 · Stream 2");
    // The row element is reused for a shorter text (or the column was widened).
    const shorter = { ...recycled, textContent: "GPU 0", scrollWidth: 40 };
    tipCutCell(shorter);
    assert.equal(shorter.dataset["tip"], undefined);
    assert.equal(shorter.dataset["tipCut"], undefined);
  });

  test("a column's own tooltip is kept, cut or not", () => {
    const own = cell("at::native::vectorized_elementwise_kernel<4, …>", 300, 160, { tip: "void at::native::vectorized_elementwise_kernel<4, float>(int, float*)" });
    tipCutCell(own);
    assert.equal(own.dataset["tip"], "void at::native::vectorized_elementwise_kernel<4, float>(int, float*)");
    assert.equal(own.dataset["tipCut"], undefined);
  });

  test("an empty cell gets no tooltip", () => {
    const empty = cell("", 10, 0);
    tipCutCell(empty);
    assert.equal(empty.dataset["tip"], undefined);
  });
});
