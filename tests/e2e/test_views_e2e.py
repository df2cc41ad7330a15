"""The analysis views, read as a person reads them: real traces, a real TensorBoard, headless Chromium.

Each test picks a run and a tab the way a user does (run picker, tab button) and reads the
number the view is for. Known figures of the ResNet-50 reference trace are checked as
such; for the Memory and Distributed views the expected value comes from the backend's own
route, so the test checks that the page shows what the backend computed, formatted for people.

The logdir (run folder → copies of ``tests/data``) is this module's own, since the
session logdir of ``conftest.py`` has neither memory events nor several ranks; the browser
and screenshot fixtures are conftest's.
"""

from __future__ import annotations

import csv
import io
import shutil
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

import pytest

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RESNET_RUN = "resnet"
MEMORY_RUN = "conv"
DDP_RUN = "ddp"
ONE_RANK_RUN = "ddp_rank0"
MODULES_RUN = "transformer"
# run folder → (folder under tests/data, file-name glob)
VIEW_RUNS: dict[str, tuple[str, str]] = {
    RESNET_RUN: ("kineto_resnet50/resnet50_num_workers_0", "*.pt.trace.json.gz"),
    MEMORY_RUN: ("torch213/conv_cpu_memory", "*.pt.trace.json.gz"),
    DDP_RUN: ("torch213/ddp_gloo_2ranks", "rank*.pt.trace.json.gz"),
    ONE_RANK_RUN: ("torch213/ddp_gloo_2ranks", "rank0.*.pt.trace.json.gz"),
    MODULES_RUN: ("torch213/transformer_infer", "*.pt.trace.json.gz"),
}

PAGE_TIMEOUT_S = 60.0
RUN_LOAD_TIMEOUT_S = 180.0
POLL_S = 0.25
PLUGIN_FRAME = "iframe[src*='plugin_entry.html?name=profscope']"
ROUTES = "/data/plugin/profscope"


# --- server with this module's logdir ----------------------------------------------------


@pytest.fixture(scope="module")
def views_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("views-logdir")
    for run, (folder, pattern) in VIEW_RUNS.items():
        sources = sorted((REAL_TRACES / folder).glob(pattern))
        assert sources, f"no {pattern} in tests/data/{folder}"
        (logdir / run).mkdir()
        for source in sources:
            shutil.copyfile(source, logdir / run / source.name)  # copies: links leaving the logdir may be refused

    with running_tensorboard(logdir, tmp_path_factory.mktemp("views-tensorboard")) as server:
        yield server


def _ready_runs(server: TensorBoardServer, runs: tuple[str, ...]) -> dict[str, Any]:
    """Waits until the backend has loaded `runs`; returns the run list entries by name."""
    deadline = time.monotonic() + RUN_LOAD_TIMEOUT_S
    while True:
        listing = server.get_json(f"{ROUTES}/runs")
        assert isinstance(listing, dict)
        by_name = {run["name"]: run for run in listing["runs"]}
        if listing.get("scanned") is True and all(by_name.get(run, {}).get("status") == "ready" for run in runs):
            return by_name
        failed = [run for run in runs if by_name.get(run, {}).get("status") == "error"]
        assert not failed, f"runs failed to load: {[(run, by_name[run].get('error')) for run in failed]}"
        if time.monotonic() > deadline:
            raise AssertionError(f"runs not ready after {RUN_LOAD_TIMEOUT_S:.0f} s: {by_name}")
        time.sleep(0.5)


def _route(server: TensorBoardServer, route: str, **params: object) -> dict[str, Any]:
    answer = server.get_json(f"{ROUTES}/{route}?{urllib.parse.urlencode(params)}")
    assert isinstance(answer, dict)
    assert "error" not in answer, answer
    return answer


# --- what a user does --------------------------------------------------------------------


def _wait(driver: "WebDriver", timeout_s: float = PAGE_TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=POLL_S)


def _css(testid: str, extra: str = "") -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']{extra}")


def _find(driver: "WebDriver", testid: str, extra: str = "", timeout_s: float = RUN_LOAD_TIMEOUT_S) -> "WebElement":
    """The element once it is there (views load in the background, so wait rather than sleep)."""
    return _wait(driver, timeout_s).until(lambda d: next(iter(d.find_elements(*_css(testid, extra))), None))


def _open_view(driver: "WebDriver", server: TensorBoardServer, run: str, view: str) -> None:
    """Opens Profscope's tab, picks `run` in the run picker and clicks the view's tab.

    The backend is given the time to load the run first (what loading looks like is
    test_browser's subject): a view mounted while the run list still changes is mounted again.
    """
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    _ready_runs(server, (run,))
    driver.get(server.plugin_url())
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    picker = _wait(driver).until(
        lambda d: next(
            (
                element
                for element in d.find_elements(*_css("run-picker"))
                if run in [option.get_attribute("value") for option in Select(element).options]
            ),
            None,
        )
    )
    Select(picker).select_by_value(run)
    _find(driver, f"tab-{view}").click()
    _wait(driver).until(lambda d: d.find_element(*_css(f"tab-{view}")).get_attribute("aria-selected") == "true")
    _find(driver, f"view-{view}")


def _settled(driver: "WebDriver", read: Callable[["WebDriver"], Any], timeout_s: float = RUN_LOAD_TIMEOUT_S) -> Any:
    """What `read` finds once it finds something (not None). The shell remounts a view when the
    selection or the URL changes (TensorBoard may rewrite its hash while the page settles), so
    an element found a moment ago can be gone: reading again then is what a person does too."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    def attempt(d: "WebDriver") -> Any:
        try:
            return read(d)
        except (StaleElementReferenceException, NoSuchElementException):
            return None

    return _wait(driver, timeout_s).until(attempt)


def _text(driver: "WebDriver", testid: str, extra: str = "") -> str:
    """The text of an element, once it has some."""
    return str(_settled(driver, lambda d: d.find_element(*_css(testid, extra)).text.strip() or None))


def _top_row_cells(driver: "WebDriver", table_testid: str) -> dict[str, str]:
    """The first row of a virtualised table as {column id: cell text}."""
    from selenium.webdriver.common.by import By

    def read(d: "WebDriver") -> Optional[dict[str, str]]:
        table = d.find_element(*_css(table_testid))
        rows = table.find_elements(By.CSS_SELECTOR, ".ps-vtable-row[data-index='0']")
        if not rows:
            return None
        columns = [button.get_attribute("data-column") or "" for button in table.find_elements(By.CSS_SELECTOR, ".ps-vtable-sort")]
        cells = [cell.text.strip() for cell in rows[0].find_elements(By.CSS_SELECTOR, ".ps-vtable-td")]
        assert len(columns) == len(cells), (columns, cells)
        return dict(zip(columns, cells))

    return dict(_settled(driver, read))


def format_bytes(value: float) -> str:
    """Bytes as the frontend writes them (lib/format.ts formatBytes): binary units, three significant digits."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    magnitude, unit = abs(value), 0
    while magnitude >= 1024 and unit < len(units) - 1:
        magnitude /= 1024
        unit += 1
    sign = "-" if value < 0 else ""
    if unit == 0:
        return f"{sign}{round(magnitude)} B"
    decimals = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2
    return f"{sign}{magnitude:.{decimals}f} {units[unit]}"


def test_format_bytes_matches_the_frontend_examples() -> None:
    # The examples of formatBytes's documentation (frontend/src/lib/format.ts).
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.50 KiB"
    assert format_bytes(-3 * 1024 * 1024) == "-3.00 MiB"


# --- the views ---------------------------------------------------------------------------


def test_overview_shows_the_resnet_gpu_utilization(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    _open_view(browser, views_server, RESNET_RUN, "overview")
    # The reference figure for this trace (the first span: 55.5% of the step time has a kernel running).
    assert _text(browser, "gpu-utilization") == "55.5%"
    assert _text(browser, "share-kernel") == "55.5%"
    # The chart's legend reads the averages table's figures in its unit: "Kernel 98,589 µs (55.5%)", not "98.6 ms".
    from selenium.webdriver.common.by import By

    legend = _find(browser, "breakdown-legend")
    kernel = legend.find_elements(By.CSS_SELECTOR, "li")[0].find_element(By.CSS_SELECTOR, ".ps-legend-value").text
    assert kernel == f"{_text(browser, 'average-kernel')} (55.5%)" == "98,589 µs (55.5%)", kernel
    assert _text(browser, "breakdown-hover") == f"Mean per step: {_text(browser, 'average-step-time')}"
    screenshot("overview-resnet")


def test_operator_view_lists_the_costliest_device_operator_first(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    _open_view(browser, views_server, RESNET_RUN, "operator")
    top = _top_row_cells(browser, "operator-table")
    assert top["name"] == "aten::cudnn_convolution_backward_weight", top
    assert top["calls"] == "318", top
    screenshot("operator-resnet")


def test_kernel_view_lists_the_top_kernel_with_its_calls(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    _open_view(browser, views_server, RESNET_RUN, "kernel")
    top = _top_row_cells(browser, "kernel-table")
    assert top["name"].startswith("cudnn::detail::dgrad_engine"), top
    assert top["calls"] == "162", top
    screenshot("kernel-resnet")


def test_memory_view_shows_the_peak_the_backend_computed(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    runs = _ready_runs(views_server, (MEMORY_RUN,))
    worker = runs[MEMORY_RUN]["workers"][0]
    memory = _route(views_server, "memory", run=MEMORY_RUN, worker=worker["name"], span=worker["spans"][0])
    assert memory["available"] is True
    device = memory["devices"][0]["id"]
    expected_peak = format_bytes(memory["peak"][device]["allocated"])

    _open_view(browser, views_server, MEMORY_RUN, "memory")
    assert _text(browser, "memory-peak-value", f"[data-device='{device}']") == expected_peak
    # Times count from the span's start the memory answer states, as in its CSV: the same row reads the same.
    top = _top_row_cells(browser, "memory-alloc-table")
    query = urllib.parse.urlencode({"run": MEMORY_RUN, "worker": worker["name"], "span": worker["spans"][0],
                                    "format": "csv", "table": "events", "limit": 5000})
    with urllib.request.urlopen(f"{views_server.url}{ROUTES}/memory?{query}", timeout=60) as response:
        rows = list(csv.DictReader(io.StringIO(response.read().decode("utf-8"))))
    same = next(row for row in rows if row["Address"] == top["addr"])
    assert top["alloc_time"] == f"{round(float(same['Allocated at (us from the span start)'])):,}", (top, same)
    # One request for the span's summary (the run list's), none of the page's own for its time origin.
    summaries = browser.execute_script(
        "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/summary?')).length")
    assert summaries == 1, summaries
    # The chart is drawn, and a drag across it narrows the tables to a time range.
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    chart = _find(browser, "memory-chart", f"[data-device='{device}']")
    plot = _wait(browser).until(lambda _d: next(iter(chart.find_elements(By.CSS_SELECTOR, ".u-over")), None))
    count_before = _text(browser, "memory-alloc-count")
    width = plot.size["width"]
    ActionChains(browser).move_to_element_with_offset(plot, -width // 4, 0).click_and_hold().move_by_offset(
        width // 5, 0
    ).release().perform()
    _wait(browser).until(lambda d: d.find_element(*_css("memory-range")).text.startswith("Selected"))
    _wait(browser).until(lambda d: d.find_element(*_css("memory-tables")).get_attribute("data-state") == "ready")
    count_after = _text(browser, "memory-alloc-count")
    assert int(count_after.split()[0]) < int(count_before.split()[0]), (count_before, count_after)
    screenshot("memory-conv-selected")


def test_distributed_view_names_the_straggler(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    _ready_runs(views_server, (DDP_RUN,))
    distributed = _route(views_server, "distributed", run=DDP_RUN)
    assert distributed["available"] is True and distributed["straggler"] is not None
    straggler = distributed["straggler"]

    _open_view(browser, views_server, DDP_RUN, "distributed")
    shown = _settled(browser, lambda d: d.find_element(*_css("distributed-straggler")).get_attribute("data-worker"))
    assert shown == straggler["worker"]
    text = _text(browser, "distributed-straggler-text")
    assert f"(worker {straggler['worker']})" in text, text
    assert "is the slowest" in text, text
    # Two charts (step breakdown, wait vs transfer) with one bar per rank; the straggler's are marked.
    bars = browser.find_elements(*_css("rank-bar"))
    workers = [rank["worker"] for rank in distributed["ranks"]]
    assert sorted(bar.get_attribute("data-worker") or "" for bar in bars) == sorted(workers * 2)
    marked = {bar.get_attribute("data-worker") for bar in bars if bar.get_attribute("data-straggler") == "true"}
    assert marked == {straggler["worker"]}
    screenshot("distributed-ddp")


def test_one_rank_of_a_job_is_distributed(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    """Rank 0 of the two-rank job alone: its rank row and collectives, and a note that a rank is missing."""
    _ready_runs(views_server, (ONE_RANK_RUN,))
    distributed = _route(views_server, "distributed", run=ONE_RANK_RUN)
    assert distributed["available"] is True and distributed["straggler"] is None

    _open_view(browser, views_server, ONE_RANK_RUN, "distributed")
    note = _text(browser, "distributed-note")
    assert note == distributed["notes"][0] and "1 of the job's 2 ranks" in note
    bars = _settled(browser, lambda d: d.find_elements(*_css("rank-bar")) or None)
    assert {bar.get_attribute("data-worker") for bar in bars} == {"rank0"}
    assert not browser.find_elements(*_css("distributed-unavailable"))
    screenshot("distributed-one-rank")


def test_call_stacks_say_where_their_python_frames_come_from(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    """The 2021 ResNet-50 trace has no Python function events, but its operators carry a Call stack: the page says
    that its frames come from there; the Gloo job records neither, and the page says how to record them."""
    runs = _ready_runs(views_server, (RESNET_RUN, ONE_RANK_RUN))
    worker = runs[RESNET_RUN]["workers"][0]
    flame = _route(views_server, "flamegraph", run=RESNET_RUN, worker=worker["name"], span=worker["spans"][0])
    assert flame["stacks_from"] == "call_stacks" and flame["note"] is None
    _open_view(browser, views_server, RESNET_RUN, "stacks")
    assert _find(browser, "stacks-source").get_attribute("data-from") == "call_stacks"
    assert "Call stack" in _text(browser, "stacks-source")
    screenshot("stacks-from-call-stacks")

    rank = runs[ONE_RANK_RUN]["workers"][0]
    flame = _route(views_server, "flamegraph", run=ONE_RANK_RUN, worker=rank["name"], span=rank["spans"][0])
    assert flame["stacks_from"] == "none" and "with_stack=True" in flame["note"]
    _open_view(browser, views_server, ONE_RANK_RUN, "stacks")
    assert _find(browser, "stacks-source").get_attribute("data-from") == "none"
    assert _text(browser, "stacks-source") == flame["note"]
    screenshot("stacks-none")


def test_call_stacks_and_modules_of_the_transformer(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    runs = _ready_runs(views_server, (MODULES_RUN,))
    worker = runs[MODULES_RUN]["workers"][0]
    modules = _route(views_server, "modules", run=MODULES_RUN, worker=worker["name"], span=worker["spans"][0])
    top_level = [name for name, parent in zip(modules["nodes"]["name"], modules["nodes"]["parent"]) if parent == 0]

    flame = _route(views_server, "flamegraph", run=MODULES_RUN, worker=worker["name"], span=worker["spans"][0])
    _open_view(browser, views_server, MODULES_RUN, "stacks")
    graph = _find(browser, "flame-graph")
    _wait(browser).until(lambda _d: int(graph.get_attribute("data-frames") or 0) > 1)
    # Where the Python frames come from: this trace's own Python function events.
    assert flame["stacks_from"] == "python_frames"
    assert _find(browser, "stacks-source").get_attribute("data-from") == "python_frames"
    assert "Python function events" in _text(browser, "stacks-source")
    assert graph.get_attribute("data-focus") == "all"
    search = _find(browser, "stacks-search")
    search.send_keys("aten::addmm")
    _wait(browser).until(lambda _d: int(graph.get_attribute("data-matches") or 0) > 0)
    assert "match" in _find(browser, "stacks-search-summary").text
    screenshot("stacks-transformer")

    from selenium.webdriver.common.by import By

    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))
    _find(browser, "tab-modules").click()
    table = _find(browser, "modules-table")
    names = [row.get_attribute("data-name") for row in table.find_elements(*_css("module-row"))]
    assert names[0] == "(model)"
    assert set(top_level) <= set(names), (top_level, names)
    screenshot("modules-transformer")


def test_the_header_says_what_could_not_be_derived(
    browser: "WebDriver", views_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    """A CPU-only span has no device activity: the note beside the framework lists the summary's limitations."""
    from selenium.webdriver.common.by import By

    runs = _ready_runs(views_server, (MEMORY_RUN,))
    worker = runs[MEMORY_RUN]["workers"][0]
    summary = _route(views_server, "summary", run=MEMORY_RUN, worker=worker["name"], span=worker["spans"][0])
    expected = [item["text"] for item in summary["limitations"]]
    assert expected, summary

    _open_view(browser, views_server, MEMORY_RUN, "overview")
    notes = _find(browser, "span-notes")
    _wait(browser).until(lambda _d: notes.is_displayed())
    heading = notes.find_element(By.CSS_SELECTOR, "summary")
    count = len(expected)
    assert heading.text == f"{count} thing{'' if count == 1 else 's'} could not be derived"
    heading.click()
    _wait(browser).until(lambda _d: notes.get_attribute("open") is not None)
    assert [li.text for li in notes.find_elements(By.CSS_SELECTOR, "li")] == expected
    screenshot("span-notes-open")  # (of the whole window: back into the plugin's frame afterwards)
    from selenium.webdriver.support import expected_conditions as ec

    _wait(browser).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
    # A click elsewhere on the page closes it, as a menu would.
    _find(browser, "tab-overview").click()  # the first tab, at the left: never under the open list
    _wait(browser).until(lambda _d: notes.get_attribute("open") is None)
