import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";
import { eventDetail, type EventAnswer } from "../src/api/trace";
import { DetailsPanel } from "../src/trace/panel/details";
import { installFakeDocument, type FakeElement } from "./fake_dom";

beforeEach(installFakeDocument);

const KERNEL: EventAnswer = {
  id: 7, name: "ncclKernel_AllReduce_RING_LL_Sum_float", cat: "kernel", track: "s3", start: 1000, dur: 2636.669, depth: 0,
  end: 3636.669, thread: "stream 40", process: "GPU 0", kind: "gpu", args: {}, stack: [], ancestors: [], flows: [],
  launched_by: null, operator: null, launches: [],
  bandwidth: {
    kind: "collective", label: "allreduce", bytes: 26_550_272, group_size: 2, bandwidth: 1.007e10, bus_bandwidth: 1.007e10,
    note: "Rank bandwidth: the message over this rank's own duration of the call",
  },
};

function shown(answer: EventAnswer): FakeElement {
  const panel = new DetailsPanel({ jumpTo: () => undefined, zoomToSelected: () => undefined, close: () => undefined,
    loadWholeTexts: () => Promise.reject(new Error("unused")) }, 0);
  panel.show(eventDetail(answer));
  return panel.root as unknown as FakeElement;
}

describe("the selected slice's bandwidth", () => {
  test("a collective call: message, group size, algorithm and bus bandwidth, and how they were computed", () => {
    const section = shown(KERNEL).findByTestId("trace-details-bandwidth");
    assert.ok(section);
    const text = section.textContent;
    for (const part of ["Collective", "allreduce", "Group size", "2", "Algorithm bandwidth", "10.1 GB/s", "Bus bandwidth", "Rank bandwidth"]) {
      assert.ok(text.includes(part), `${part} in ${text}`);
    }
  });

  test("a copy: its direction, bytes and bandwidth; no bus bandwidth", () => {
    const copy = shown({ ...KERNEL, bandwidth: { kind: "copy", label: "Host to device", bytes: 8_192_000, group_size: null,
      bandwidth: 4.867e11, bus_bandwidth: null, note: "The copy's bytes over its duration" } });
    const text = copy.findByTestId("trace-details-bandwidth")?.textContent ?? "";
    assert.ok(text.includes("Host to device") && text.includes("487 GB/s"), text);
    assert.ok(!text.includes("Bus bandwidth"));
  });

  test("any other slice has no bandwidth section", () => {
    assert.equal(shown({ ...KERNEL, bandwidth: null }).findByTestId("trace-details-bandwidth"), null);
  });
});
