import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  EMPTY_URL_STATE,
  hostActiveTab,
  mergeHostHash,
  parseUrlState,
  readHostState,
  serializeUrlState,
  splitHash,
  type UrlState,
} from "../src/state/url_state";

const state: UrlState = {
  view: "kernel",
  run: "exp/a b&c=d",
  worker: "worker0",
  span: "1623143089861",
  params: { "kernel.group_by": "op_and_name", "operator.sort": "-device_self" },
};

describe("own hash", () => {
  test("round-trips a state, including names with &, = and spaces", () => {
    const hash = serializeUrlState(state);
    assert.deepEqual(parseUrlState(`#${hash}`), state);
    assert.deepEqual(parseUrlState(hash), state, "the leading # is optional");
  });

  test("serialises in a fixed order and keeps slashes readable", () => {
    assert.equal(
      serializeUrlState(state),
      "view=kernel&run=exp/a%20b%26c%3Dd&worker=worker0&span=1623143089861" +
        "&kernel.group_by=op_and_name&operator.sort=-device_self",
    );
  });

  test("a hash without state is null, so the caller can look elsewhere", () => {
    assert.equal(parseUrlState(""), null);
    assert.equal(parseUrlState("#"), null);
    assert.equal(parseUrlState("#unrelated=1&junk"), null);
  });

  test("ignores unknown views, malformed escapes and unknown keys", () => {
    assert.deepEqual(parseUrlState("#view=nope&run=r&bad=%E0%A4%A&run2=x"), { ...EMPTY_URL_STATE, run: "r" });
    assert.deepEqual(parseUrlState("#run=%E0%A4%A"), null);
  });

  test("the first of two equal keys in params wins, and values may contain '='", () => {
    assert.deepEqual(parseUrlState("#trace.q=a=b&trace.q=c")?.params, { "trace.q": "a=b" });
  });

  test("keeps the dot run name", () => {
    assert.equal(parseUrlState(serializeUrlState({ ...EMPTY_URL_STATE, run: "." }))?.run, ".");
  });
});

describe("TensorBoard's hash", () => {
  test("splits bare and key=value pieces", () => {
    assert.deepEqual(
      splitHash("#profscope&smoothing=0.6").map((entry) => [entry.key, entry.value]),
      [
        ["profscope", null],
        ["smoothing", "0.6"],
      ],
    );
    assert.equal(hostActiveTab("#scalars&p.profscope.run=a"), "scalars");
    assert.equal(hostActiveTab(""), "");
  });

  test("merging keeps TensorBoard's own pieces verbatim and in place", () => {
    const merged = mergeHostHash("profscope&tagFilter=loss%7Cacc&p.profscope.run=old&p.whatif.x=1", state);
    assert.ok(merged.startsWith("profscope&tagFilter=loss%7Cacc&p.whatif.x=1&p.profscope.view=kernel&"), merged);
    assert.ok(!merged.includes("p.profscope.run=old"));
    assert.deepEqual(readHostState(merged), state);
  });

  test("reads only Profscope's keys", () => {
    assert.equal(readHostState("#profscope&run=a&view=kernel"), null);
    assert.deepEqual(readHostState("#profscope&p.profscope.run=a%2Fb"), { ...EMPTY_URL_STATE, run: "a/b" });
  });
});
