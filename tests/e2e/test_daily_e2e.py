"""What a daily user does, in headless Chromium inside TensorBoard: download a table as CSV (the file
is the route's CSV and holds the rows the table shows), compare two spans per sample, summarise an
area of the trace, and read the empty views; then screenshots of the changed pages at 1280 and
1920 px, light and dark.

Its own TensorBoard over a logdir of real traces: ``mlp`` (torch's handler, CPU, two spans),
``group/resnet`` (GPU, two spans), ``convmem`` (CPU memory), and ``bs32`` / ``bs64`` imported with
the writer's manifests (batch sizes 32 and 64).
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

import pytest

import real_traces

from .conftest import _save_screenshot, chromium_driver, running_tensorboard
from .harness import TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROUTES = "/data/plugin/profscope"
PLUGIN_FRAME = "iframe[src*='plugin_entry.html?name=profscope']"
TIMEOUT_S = 90.0
POLL_S = 0.2
WIDTHS = (1280, 1920)
THEMES = ("light", "dark")


# --- logdir, server, browser ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def daily_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("daily-logdir")
    data = real_traces.root()
    for run, folder in (("mlp", "torch213/mlp_train_sched"), ("group/resnet", "kineto_resnet50/resnet50_num_workers_0"),
                        ("convmem", "torch213/conv_cpu_memory")):
        (logdir / run).mkdir(parents=True)
        for source in sorted((data / folder).glob("*.pt.trace.json.gz")):
            (logdir / run / source.name).write_bytes(source.read_bytes())
            stat = source.stat()
            os.utime(logdir / run / source.name, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    profscope = Path(sys.executable).with_name("profscope")
    for run, folder, batch in (("bs32", "torch213/dataloader_bound_w0", 32), ("bs64", "torch213/dataloader_bound_w2", 64)):
        source = next((data / folder).glob("*.pt.trace.json.gz"))
        subprocess.run([str(profscope), "import", str(source), "--logdir", str(logdir), "--run", run,
                        "--batch-size", str(batch), "--no-event-file"], check=True, capture_output=True)
    with running_tensorboard(logdir, tmp_path_factory.mktemp("daily-tensorboard")) as server:
        _wait_ready(server, ["mlp", "group/resnet", "convmem", "bs32", "bs64"])
        yield server


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    folder = tmp_path / "downloads"
    folder.mkdir()
    return folder


@pytest.fixture
def browser(tmp_path: Path, downloads: Path) -> Iterator["WebDriver"]:
    driver = chromium_driver(tmp_path / "chromium-profile", tmp_path / "chromedriver.log")
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    try:
        yield driver
    finally:
        driver.quit()


def _wait_ready(server: TensorBoardServer, runs: list[str]) -> None:
    deadline = time.monotonic() + 240
    while True:
        listing = server.get_json(f"{ROUTES}/runs")
        assert isinstance(listing, dict)
        status = {r["name"]: r["status"] for r in listing["runs"]}
        if all(status.get(run) == "ready" for run in runs):
            return
        assert not any(status.get(run) == "error" for run in runs), status
        assert time.monotonic() < deadline, f"runs not ready: {status}"
        time.sleep(0.5)


def _wait(driver: "WebDriver", timeout_s: float = TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=POLL_S)


def _css(testid: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']")


def _open(driver: "WebDriver", server: TensorBoardServer, view: str, run: str, **params: str) -> None:
    """The plugin at a view, with view parameters, as a shared link opens it; then into its frame."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    pieces = [f"p.profscope.view={view}", f"p.profscope.run={urllib.parse.quote(run, safe='')}"]
    pieces += [f"p.profscope.{view}.{key}={urllib.parse.quote(value, safe='')}" for key, value in params.items()]
    driver.get(f"{server.url}/#profscope&{'&'.join(pieces)}")
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))


def _get(server: TensorBoardServer, url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return response.read()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:  # renamed meanwhile
        return 0


def _downloaded(folder: Path, timeout_s: float = 30.0) -> Path:
    deadline = time.monotonic() + timeout_s
    seen: Optional[tuple[Path, int]] = None
    while time.monotonic() < deadline:
        # Chromium may show the file under its final name before writing it (seen once in CI: an empty read), and
        # keeps partial ones as .crdownload or hidden temporaries: a download is done when it alone is there, not
        # empty, and its size is the same at two polls.
        entries = list(folder.iterdir())
        partial = [p for p in entries if p.name.endswith(".crdownload") or p.name.startswith(".")]
        done = [(p, _size(p)) for p in entries if p not in partial]
        if len(done) == 1 and not partial and done[0][1] > 0:
            if done[0] == seen:
                return done[0][0]
            seen = done[0]
        time.sleep(POLL_S)
    raise AssertionError(f"nothing was downloaded into {folder}: {list(folder.iterdir())}")


def _table_rows(driver: "WebDriver", testid: str) -> list[list[str]]:
    """The rows a virtual table has in the DOM, in display order, as their cells' text."""
    from selenium.webdriver.common.by import By

    table = driver.find_element(*_css(testid))
    rows = table.find_elements(By.CSS_SELECTOR, ".ps-vtable-row:not([hidden])")
    keyed = sorted(((int(row.get_attribute("data-index") or 0), row) for row in rows), key=lambda entry: entry[0])
    return [[cell.get_attribute("textContent") or "" for cell in row.find_elements(By.CSS_SELECTOR, ".ps-vtable-td")]
            for _, row in keyed]


def _csv_rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def _set_theme(driver: "WebDriver", theme: str) -> None:
    """TensorBoard's dark mode: a class on its own <body>, which the plugin follows."""
    driver.switch_to.default_content()
    driver.execute_script("document.body.classList.toggle('dark-mode', arguments[0] === 'dark')", theme)


def _shots(driver: "WebDriver", tmp_path: Path, name: str, label: str, ready: Callable[["WebDriver"], Any]) -> None:
    """Screenshots at 1280 and 1920 px wide, light and dark; the driver ends in the plugin's frame."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    for theme in THEMES:
        for width in WIDTHS:
            _set_theme(driver, theme)
            driver.set_window_size(width, 1100)
            _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))
            _wait(driver).until(ready)
            time.sleep(0.4)  # charts re-render on resize
            _save_screenshot(driver, tmp_path / "screenshots", name, f"{label}-{width}-{theme}")
    _set_theme(driver, "light")
    _wait(driver).until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, PLUGIN_FRAME)))


# --- export ----------------------------------------------------------------------------------


def test_operator_csv_is_the_route_and_the_rows_shown(browser: "WebDriver", daily_server: TensorBoardServer,
                                                      downloads: Path, tmp_path: Path,
                                                      request: pytest.FixtureRequest) -> None:
    _open(browser, daily_server, "operator", "mlp", filter="aten", sort="calls:asc", group_by="input_shape")
    _wait(browser).until(lambda d: d.find_elements(*_css("operator-table")))
    shown = _table_rows(browser, "operator-table")
    assert shown, "the operator table shows no rows"
    link = browser.find_element(*_css("operator-csv"))
    link.click()
    downloaded = _downloaded(downloads).read_bytes()
    href = link.get_attribute("href") or ""
    query = urllib.parse.parse_qs(urllib.parse.urlparse(href).query)
    assert query["format"] == ["csv"] and query["sort"] == ["calls:asc"] and query["filter"] == ["aten"]
    assert query["group_by"] == ["input_shape"]
    # The file is the route's CSV, byte for byte ...
    assert downloaded == _get(daily_server, href)
    lines = _csv_rows(downloaded)
    assert lines[0][:3] == ["Operator", "Input shapes", "Calls"]
    # ... and holds the rows the table shows, in their order: name, shape and calls of each.
    table_count = int(browser.find_element(*_css("operator-table")).get_attribute("data-rows") or 0)
    assert len(lines) - 1 == table_count
    assert [(row[0], row[1], row[2].replace(",", "")) for row in shown] == [tuple(line[:3]) for line in lines[1:len(shown) + 1]]
    assert all("aten" in line[0].lower() for line in lines[1:])
    # The filter narrows the top-10 charts beside the table too.
    bars = browser.find_elements(*_css("top-operators-host"))[0].text
    assert "matching “aten”" in bars
    _shots(browser, tmp_path, request.node.name, "operator-filtered", lambda d: d.find_elements(*_css("operator-table")))


def test_memory_tables_download_what_they_show(browser: "WebDriver", daily_server: TensorBoardServer,
                                               downloads: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _open(browser, daily_server, "memory", "convmem", op_sort="calls:desc")
    _wait(browser).until(lambda d: d.find_elements(*_css("memory-operator-table")))
    _wait(browser).until(lambda d: _table_rows(d, "memory-operator-table"))
    shown = _table_rows(browser, "memory-operator-table")
    link = browser.find_element(*_css("memory-operator-csv"))
    link.click()
    downloaded = _downloaded(downloads).read_bytes()
    assert downloaded == _get(daily_server, link.get_attribute("href") or "")
    lines = _csv_rows(downloaded)
    assert lines[0][:2] == ["Operator", "Calls"]
    assert [(row[0], row[1].replace(",", "")) for row in shown] == [tuple(line[:2]) for line in lines[1:len(shown) + 1]]
    _shots(browser, tmp_path, request.node.name, "memory", lambda d: d.find_elements(*_css("memory-chart")))


# --- compare per sample ----------------------------------------------------------------------------


def _micros(us: float) -> str:
    """formatMicros of the page: three significant digits below 100 µs, whole µs with separators above."""
    magnitude = abs(us)
    decimals = 0 if magnitude >= 100 or magnitude == 0 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
    return f"{us:,.{decimals}f} µs"


def test_compare_per_sample_with_batch_sizes_entered_in_the_page(
        browser: "WebDriver", daily_server: TensorBoardServer, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    listing = daily_server.get_json(f"{ROUTES}/runs")
    assert isinstance(listing, dict)
    spans = next(r for r in listing["runs"] if r["name"] == "mlp")["workers"][0]["spans"]
    # The second span has the shorter steps: as the baseline (batch 32) against the first (batch 64), the
    # experiment is slower per step and faster per sample.
    pair = {"base_run": "mlp", "base_worker": "worker0", "base_span": spans[1],
            "exp_run": "mlp", "exp_worker": "worker0", "exp_span": spans[0]}
    _open(browser, daily_server, "compare", "mlp", **pair)
    _wait(browser).until(lambda d: d.find_elements(*_css("compare-per-sample-missing")))
    # No manifest: the page asks for the batch sizes; a person enters 32 and 64.
    for side, value in (("base", "32"), ("exp", "64")):
        field = browser.find_element(*_css(f"compare-batch-{side}"))
        field.clear()
        field.send_keys(value)
        field.send_keys("\t")
    _wait(browser).until(lambda d: d.find_elements(*_css("compare-headline-sample")))
    expected = daily_server.get_json(f"{ROUTES}/compare?" + urllib.parse.urlencode(
        dict(pair, base_batch_size=32, exp_batch_size=64)))
    assert isinstance(expected, dict)
    per_sample = expected["per_sample"]
    assert per_sample["base"] == pytest.approx(expected["step_time"]["base"] / 32)
    assert browser.find_element(*_css("compare-sample-base")).text == _micros(per_sample["base"])
    assert browser.find_element(*_css("compare-sample-exp")).text == _micros(per_sample["exp"])
    # Per step the experiment (batches twice as big) is slower; per sample it is faster, and the page says which is which.
    assert expected["step_time"]["delta"] > 0 > per_sample["delta"]
    assert browser.find_element(*_css("compare-headline")).text.endswith("the experiment is slower per step.")
    assert "the experiment is faster per sample" in browser.find_element(*_css("compare-headline-sample")).text
    notes = [n.get_attribute("data-id") for n in browser.find_elements(*_css("compare-note"))]
    assert "batch_sizes_differ" in notes
    # The batch sizes are in the link.
    browser.switch_to.default_content()
    assert "p.profscope.compare.base_batch=32" in browser.current_url
    assert "p.profscope.compare.exp_batch=64" in browser.current_url


def test_compare_per_sample_from_the_manifests(browser: "WebDriver", daily_server: TensorBoardServer,
                                               tmp_path: Path, request: pytest.FixtureRequest) -> None:
    listing = daily_server.get_json(f"{ROUTES}/runs")
    assert isinstance(listing, dict)
    span = {r["name"]: r["workers"][0]["spans"][0] for r in listing["runs"]}
    _open(browser, daily_server, "compare", "bs32", base_run="bs32", base_worker="worker0", base_span=span["bs32"],
          exp_run="bs64", exp_worker="worker0", exp_span=span["bs64"])
    _wait(browser).until(lambda d: d.find_elements(*_css("compare-headline-sample")))
    assert browser.find_element(*_css("compare-batch-base")).get_attribute("placeholder") == "32 (manifest)"
    # The run table shows samples per second (batch size × steps per second).
    _wait(browser).until(lambda d: _table_rows(d, "runs-table"))
    header = browser.find_element(*_css("runs-table")).text
    assert "Samples/s" in header
    _shots(browser, tmp_path, request.node.name, "compare", lambda d: d.find_elements(*_css("compare-headline-sample")))


# --- area selection --------------------------------------------------------------------------------


def _trace_ready(driver: "WebDriver") -> bool:
    found = driver.find_elements(*_css("trace-viewer"))
    return bool(found) and found[0].get_attribute("data-ready") == "true"


def test_area_selection_summarises_the_range(browser: "WebDriver", daily_server: TensorBoardServer, downloads: Path,
                                             tmp_path: Path, request: pytest.FixtureRequest) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    _open(browser, daily_server, "trace", "group/resnet")
    _wait(browser).until(_trace_ready)
    canvas = browser.find_element(*_css("trace-canvas"))
    width, height = canvas.size["width"], canvas.size["height"]
    left = -width // 2 + 230  # just right of the 220 px names
    timeline = width - 230
    # A drag on the time axis selects a range over every track.
    (ActionChains(browser).move_to_element_with_offset(canvas, left + int(timeline * 0.2), -height // 2 + 10)
     .click_and_hold().move_to_element_with_offset(canvas, left + int(timeline * 0.7), -height // 2 + 10)
     .release().perform())
    _wait(browser).until(lambda d: d.find_element(*_css("trace-range")).get_attribute("data-state") == "ready")
    viewer = browser.find_element(*_css("trace-viewer"))
    offsets = [float(v) for v in (viewer.get_attribute("data-range") or "").split(",")]
    tracks = daily_server.get_json(f"{ROUTES}/trace/tracks?run=group%2Fresnet&worker=worker0&span="
                                   + urllib.parse.quote(_first_span(daily_server, "group/resnet")))
    assert isinstance(tracks, dict)
    query = {"run": "group/resnet", "worker": "worker0", "span": _first_span(daily_server, "group/resnet"),
             "start": str(round(tracks["start"] + offsets[0], 3)), "end": str(round(tracks["start"] + offsets[1], 3))}
    expected = daily_server.get_json(f"{ROUTES}/trace/range?" + urllib.parse.urlencode(query))
    assert isinstance(expected, dict) and expected["rows"]
    fields = browser.find_element(*_css("trace-range-fields")).text
    assert "every track" in fields and f"{expected['slices']:,}" in fields
    shown = _table_rows(browser, "trace-range-table")
    assert [(row[1], row[2].replace(",", "")) for row in shown] == [
        (r["name"], str(r["count"])) for r in expected["rows"][:len(shown)]]
    steps_text = browser.find_element(*_css("trace-range-steps")).text
    assert f"STEPS INSIDE ({expected['steps']['count']})" in steps_text.upper()
    assert ", ".join(expected["steps"]["names"]) in steps_text
    # Its CSV is the route's.
    link = browser.find_element(*_css("trace-range-csv"))
    link.click()
    assert _downloaded(downloads).read_bytes() == _get(daily_server, link.get_attribute("href") or "")
    _shots(browser, tmp_path, request.node.name, "trace-range", _trace_ready)

    # Shift+drag over the rows: the area's tracks only.
    (ActionChains(browser).key_down("\ue008").move_to_element_with_offset(canvas, left + int(timeline * 0.3), -height // 2 + 60)
     .click_and_hold().move_to_element_with_offset(canvas, left + int(timeline * 0.5), -height // 2 + 90)
     .release().key_up("\ue008").perform())
    _wait(browser).until(lambda d: "every track" not in d.find_element(*_css("trace-range-fields")).text)
    assert "track" in browser.find_element(*_css("trace-range-fields")).text


def _first_span(server: TensorBoardServer, run: str) -> str:
    listing = server.get_json(f"{ROUTES}/runs")
    assert isinstance(listing, dict)
    return next(r for r in listing["runs"] if r["name"] == run)["workers"][0]["spans"][0]


# --- empty and partial states ----------------------------------------------------------------------


def test_empty_views_say_why_and_what_would_make_them_appear(
        browser: "WebDriver", daily_server: TensorBoardServer, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _open(browser, daily_server, "kernel", "mlp")
    how = _wait(browser).until(lambda d: d.find_elements(*_css("kernel-empty-how")))[0].text
    assert "ProfilerActivity.CUDA" in how
    _shots(browser, tmp_path, request.node.name, "kernel-empty", lambda d: d.find_elements(*_css("kernel-empty")))
    browser.find_element(*_css("kernel-empty-operators")).click()
    _wait(browser).until(lambda d: d.find_elements(*_css("operator-table")))

    _open(browser, daily_server, "distributed", "mlp")
    how = _wait(browser).until(lambda d: d.find_elements(*_css("distributed-unavailable-how")))[0].text
    assert "same run" in how
    assert "single worker" in browser.find_element(*_css("distributed-unavailable")).text
    _shots(browser, tmp_path, request.node.name, "distributed-single", lambda d: d.find_elements(*_css("distributed-unavailable")))

    _open(browser, daily_server, "overview", "mlp")
    note = _wait(browser).until(lambda d: d.find_elements(*_css("gpu-summary-unavailable")))[0].text
    assert "No GPU in this span" in note
    # The span picker names the span by time, steps and length; the id stays in the tooltip.
    from selenium.webdriver.support.ui import Select

    option = Select(browser.find_element(*_css("span-picker"))).first_selected_option
    assert "steps 2–4" in option.text and option.get_attribute("value") not in option.text
    assert option.get_attribute("value") in (option.get_attribute("title") or "")
    _shots(browser, tmp_path, request.node.name, "overview-cpu", lambda d: d.find_elements(*_css("breakdown-chart")))
