"""The Memory snapshot tab in a real TensorBoard and headless Chromium.

A run holds the MLP training trace and a (hand-made) snapshot named as that trace's span: the tab draws active
memory over time, says what is alive at the peak with the figures the backend computed, pins an allocation (its
life outlined, its stack listed), and shows the snapshot beside the span's memory counter; the span's Trace tab
lists the snapshot's memory as a counter track beside the trace's own. A run of snapshots only (no trace at all)
opens too, with its out-of-memory event, and compares with the first.
"""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

import snapshot_gen

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer
from .test_views_e2e import PLUGIN_FRAME, _find, _open_view, _ready_runs, _route, _settled, _text

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "mlp"
ONLY = "oom"
TRACE = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


@pytest.fixture(scope="module")
def snapshot_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("snapshot-logdir")
    (logdir / RUN).mkdir()
    source = REAL_TRACES / TRACE
    shutil.copyfile(source, logdir / RUN / source.name)
    # Recorded while the trace was: its first entry 2 ms after the trace's first event, on the wall clock.
    base, first = snapshot_gen.trace_clock(str(source))
    snapshot = snapshot_gen.moved_to(snapshot_gen.training_snapshot(steps=3, stop_after_forward=True, max_entries=300),
                                     base // 1000 + int(first) + 2000)
    (logdir / RUN / "worker0.1795303442092317655.pickle").write_bytes(pickle.dumps(snapshot))
    (logdir / ONLY).mkdir()
    shutil.copyfile(REAL_TRACES / "memory_snapshots/expandable_oom.pickle", logdir / ONLY / "snapshot.pickle")
    with running_tensorboard(logdir, tmp_path_factory.mktemp("snapshot-tensorboard")) as server:
        yield server


def _wait_route(server: TensorBoardServer, run: str) -> dict:
    import time

    deadline = time.monotonic() + 120
    while True:
        answer = server.get_json(f"/data/plugin/profscope/memory_snapshot?run={run}")
        if isinstance(answer, dict) and "devices" in answer:
            return answer
        assert time.monotonic() < deadline, answer
        time.sleep(0.5)


def test_memory_snapshot_tab(browser: "WebDriver", snapshot_server: TensorBoardServer,
                             screenshot: Callable[[str], Path]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    # The run list first: until the first scan has found the run, the snapshot routes answer 404 (unknown run).
    _ready_runs(snapshot_server, (RUN, ONLY))
    overview = _wait_route(snapshot_server, RUN)
    _open_view(browser, snapshot_server, RUN, "snapshot")
    assert browser.find_element(By.CSS_SELECTOR, "[data-testid='tab-snapshot']").text == "Memory snapshot"
    timeline = _find(browser, "snapshot-timeline")
    _settled(browser, lambda d: int(d.find_element(By.CSS_SELECTOR, "[data-testid='snapshot-timeline']").get_attribute(
        "data-loaded") or 0) > 100 or None)
    # What is alive at the peak: the backend's figure, as the page formats bytes.
    moment = _text(browser, "snapshot-moment")
    peak = overview["devices"][0]["peak"]["bytes"]
    assert moment.startswith("Alive at the peak"), moment
    at = _route(snapshot_server, "memory_snapshot/at", run=RUN)
    assert at["live_bytes"] == peak
    assert f"{at['count']:,} allocations" in moment or f"{at['count']} allocations" in moment
    groups = _find(browser, "snapshot-groups")
    assert at["groups"][0]["label"] in groups.text
    _find(browser, "snapshot-flame")
    screenshot("snapshot-mlp")
    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))  # a screenshot leaves the frame

    # A click on a band low in the plot (late in the snapshot: the optimizer state's site) picks that moment and pins
    # the site's largest allocation.
    from selenium.webdriver.common.action_chains import ActionChains

    canvas = timeline.find_element(By.CSS_SELECTOR, "canvas")
    ActionChains(browser).move_to_element_with_offset(canvas, int(canvas.size["width"] * 0.3), 100).click().perform()
    pinned = _settled(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid='snapshot-timeline']")
                      .get_attribute("data-pinned") or None)
    assert _text(browser, "snapshot-largest").count("\n") >= 1
    assert pinned in _text(browser, "snapshot-pin")
    assert "snapshot.row=" in str(browser.execute_script("return location.hash"))

    # Pin the largest live allocation from the table: its life is outlined, its stack listed (the user's frames
    # marked).
    _find(browser, "snapshot-pin-button").click()
    frames = _settled(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid='snapshot-pin-frames']"))
    assert "yours" in frames.text and "C++" in frames.text
    assert "yours" in _text(browser, "snapshot-pin-frames")
    assert "snapshot.pin=" in str(browser.execute_script("return location.hash"))
    # Beside the profile: the span's trace is the snapshot's; both on one chart.
    assert overview["linked"]["span"] == "1795303442092317655"
    _find(browser, "snapshot-beside-chart")
    browser.execute_script("arguments[0].scrollIntoView()", _find(browser, "snapshot-pin"))
    screenshot("snapshot-mlp-pinned")
    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))

    # The allocator's state, then a run of snapshots only, with its out-of-memory event, compared with the first.
    allocator = _find(browser, "snapshot-fragmentation")
    assert "Largest free block" in allocator.text
    browser.switch_to.default_content()
    _open_view(browser, snapshot_server, ONLY, "snapshot")
    oom = _text(browser, "snapshot-oom")
    assert "3.00 GiB asked" in oom, oom
    picker = _find(browser, "snapshot-compare-picker")
    Select(picker).select_by_value(f"{RUN}|worker0.1795303442092317655.pickle")
    table = _settled(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid='snapshot-compare-table']"))
    assert "Grew by" in table.text
    browser.execute_script("arguments[0].scrollIntoView()", _find(browser, "snapshot-oom"))
    screenshot("snapshot-oom-compare")


def test_the_snapshot_is_a_counter_track_of_the_trace_viewer(browser: "WebDriver", snapshot_server: TensorBoardServer,
                                                             screenshot: Callable[[str], Path]) -> None:
    """The span's Trace tab, opened on the snapshot's stretch of time with the trace's memory counter and the
    snapshot's pinned (a shared link): the track's label names the snapshot under Memory, and its chart reads the
    snapshot's bytes."""
    import re
    import urllib.parse

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    _ready_runs(snapshot_server, (RUN,))
    overview = _wait_route(snapshot_server, RUN)
    link = overview["linked"]
    assert link["status"] == "ready" and link["trace_offset_us"] is not None
    tracks = _route(snapshot_server, "trace/tracks", run=RUN, worker=link["worker"], span=link["span"])
    [track] = [t for t in tracks["tracks"] if t["id"].startswith("c:snapshot:")]
    assert (track["id"], track["group"], track["unit"]) == ("c:snapshot:0", "Memory", "bytes")
    # The trace's own memory counter (this CPU trace's host memory), pinned above it: one time axis for both.
    own = next(t for t in tracks["tracks"] if t["id"].startswith("c:mem:"))
    device = overview["devices"][0]
    start, end = device["start"] + link["trace_offset_us"], device["end"] + link["trace_offset_us"]
    assert tracks["start"] < start < end < tracks["end"]  # recorded while the trace was
    pieces = {"view": "trace", "run": RUN, "worker": link["worker"], "span": link["span"],
              "trace.start": f"{start - 50:.3f}", "trace.end": f"{end + 50:.3f}",
              "trace.pinned": json.dumps([own["id"], track["id"]])}
    browser.get(f"{snapshot_server.url}/#profscope&" + "&".join(
        f"p.profscope.{key}={urllib.parse.quote(value, safe='/')}" for key, value in pieces.items()))
    browser.switch_to.default_content()
    _settled(browser, ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    _settled(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid='trace-viewer'][data-ready='true']"))
    canvas = _find(browser, "trace-canvas")
    width, height = canvas.size["width"], canvas.size["height"]
    # The snapshot's track is the second pinned row (40 px high) under the axis (26 px) and the "Pinned" header (22 px).
    row_y = 26 + 22 + 40 + 20 - height // 2

    def tooltip_at(x: int) -> "str | None":
        ActionChains(browser).move_to_element_with_offset(canvas, x - width // 2, row_y).perform()
        tip = browser.find_element(By.CSS_SELECTOR, "[data-testid='trace-tooltip']")
        return tip.text if tip.is_displayed() and tip.text else None

    label = _settled(browser, lambda d: tooltip_at(12))
    assert label.splitlines()[:2] == [track["name"], "Memory"], label
    # Over the chart, in the snapshot's stretch: its active and reserved bytes, as the page formats bytes.
    values = _settled(browser, lambda d: (lambda text: text if text and "active:" in text else None)(
        tooltip_at(int(width * 0.75))))
    assert values.splitlines()[0] == track["name"] and re.search(r"active: [\d.]+ (MiB|GiB)", values), values
    assert "reserved:" in values
    # Shift+drag over both pinned rows: the range's panel reads both counters in the range, peaks side by side.
    top = 26 + 22 - height // 2
    (ActionChains(browser).key_down("\ue008").move_to_element_with_offset(canvas, int(width * 0.45) - width // 2, top + 8)
     .click_and_hold().move_to_element_with_offset(canvas, int(width * 0.95) - width // 2, top + 72)
     .release().key_up("\ue008").perform())
    section = _settled(browser, lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, "[data-testid='trace-range-counters']")), None))
    shown = {(row.get_attribute("data-counter"), row.get_attribute("data-series"))
             for row in section.find_elements(By.CSS_SELECTOR, "tr[data-counter]")}
    assert {(own["id"], "allocated"), (track["id"], "active"), (track["id"], "reserved")} <= shown, shown
    assert re.search(r"[\d.]+ (MiB|GiB)", section.text), section.text
    screenshot("snapshot-trace-counter")
