"""``profscope serve`` as a person uses it: a real process, its page in headless Chromium.

The server runs the command line (no TensorBoard) on a free loopback port over a logdir of
copies of ``tests/data``; the page at ``/`` must show the same UI as the PROFSCOPE tab,
with the figures of the backend's own routes, under the page's Content-Security-Policy.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

import pytest

from .conftest import REAL_TRACES, _free_loopback_port, _stop
from .harness import TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "mlp"
RUN_SOURCE = ("torch213/mlp_train_sched", "*.pt.trace.json.gz")
ROUTES = "/data/plugin/profscope"
START_TIMEOUT_S = 60.0
RUN_LOAD_TIMEOUT_S = 180.0
PAGE_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
POLL_S = 0.25


def _serve_command(logdir: Path, port: int, cache_dir: Path) -> list[str]:
    """``profscope serve`` from the environment that runs the tests (the repository's .venv)."""
    script = Path(sys.executable).with_name("profscope")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "profscope.tb_plugin.reports.cli"]
    return launcher + ["serve", "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port),
                       "--cache-dir", str(cache_dir)]


def _wait_until_serving(server: TensorBoardServer) -> Optional[str]:
    """None once the page answers and the printed address is the right one; else what went wrong."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return f"profscope serve exited with code {server.process.returncode}"
        try:
            with urllib.request.urlopen(f"{server.url}/", timeout=5) as response:
                if response.status == 200:
                    printed = f"at {server.url}/ "
                    return None if printed in server.log_tail() else f"the log does not say {printed!r}"
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(POLL_S)
    return f"profscope serve did not answer {server.url}/ within {START_TIMEOUT_S:.0f} s"


def _start(logdir: Path, work: Path) -> TensorBoardServer:
    """A running ``profscope serve`` (a free port can be taken before the server binds it: try a few)."""
    cache_dir = work / "profscope-cache"
    failures: list[str] = []
    for attempt in range(3):
        port = _free_loopback_port()
        log_path = work / f"serve-{attempt}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                _serve_command(logdir, port, cache_dir),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=work,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
                start_new_session=True,  # its own process group: teardown stops its parser processes too
            )
        server = TensorBoardServer(process, port, logdir, cache_dir, log_path)
        problem = _wait_until_serving(server)
        if problem is None:
            return server
        _stop(process)
        failures.append(f"attempt {attempt + 1} on port {port}: {problem}\n{server.log_tail()}")
    pytest.fail("profscope serve did not start:\n" + "\n\n".join(failures), pytrace=False)


@pytest.fixture(scope="module")
def serve_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    folder, pattern = RUN_SOURCE
    sources = sorted((REAL_TRACES / folder).glob(pattern))
    assert sources, f"no {pattern} in tests/data/{folder}"
    logdir = tmp_path_factory.mktemp("serve-logdir")
    (logdir / RUN).mkdir()
    for source in sources:
        shutil.copy2(source, logdir / RUN / source.name)  # copy2 keeps the time: finished files
    server = _start(logdir, tmp_path_factory.mktemp("serve"))
    try:
        yield server
    finally:
        _stop(server.process)
        print(f"\n--- profscope serve log ({server.log_path}) ---\n{server.log_tail(4000)}")


def _ready_run(server: TensorBoardServer) -> dict[str, Any]:
    """The run list entry of RUN once the backend has loaded it."""
    deadline = time.monotonic() + RUN_LOAD_TIMEOUT_S
    while True:
        listing = server.get_json(f"{ROUTES}/runs")
        assert isinstance(listing, dict)
        runs = {run["name"]: run for run in listing["runs"]}
        entry = runs.get(RUN, {})
        assert entry.get("status") != "error", entry
        if entry.get("status") == "ready":
            return entry
        assert time.monotonic() < deadline, f"{RUN} not ready after {RUN_LOAD_TIMEOUT_S:.0f} s: {listing}"
        time.sleep(0.5)


# --- the page ------------------------------------------------------------------------------


def _wait(driver: "WebDriver", timeout_s: float = PAGE_TIMEOUT_S):  # -> WebDriverWait
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout_s, poll_frequency=POLL_S)


def _css(testid: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, f"[data-testid='{testid}']")


def _settled_text(driver: "WebDriver", testid: str) -> str:
    """The element's text once it has some (a view may be remounted while the page settles)."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    def read(d: "WebDriver") -> Optional[str]:
        try:
            return d.find_element(*_css(testid)).text.strip() or None
        except (NoSuchElementException, StaleElementReferenceException):
            return None

    return str(_wait(driver, RUN_LOAD_TIMEOUT_S).until(read))


def _selected(driver: "WebDriver", testid: str) -> str:
    from selenium.webdriver.support.ui import Select

    return Select(driver.find_element(*_css(testid))).first_selected_option.get_attribute("value") or ""


def test_page_shows_the_run_and_its_overview(
    browser: "WebDriver", serve_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    from selenium.webdriver.support.ui import Select

    _ready_run(serve_server)
    browser.get(f"{serve_server.url}/")
    assert browser.title == "Profscope"
    _wait(browser).until(lambda d: d.find_elements(*_css("profscope-app")))

    picker = _wait(browser).until(
        lambda d: next(
            (p for p in d.find_elements(*_css("run-picker"))
             if RUN in [o.get_attribute("value") for o in Select(p).options]),
            None,
        )
    )
    assert [o.get_attribute("value") for o in Select(picker).options] == [RUN]
    Select(picker).select_by_value(RUN)

    _wait(browser).until(lambda d: d.find_elements(*_css("tab-overview")))
    browser.find_element(*_css("tab-overview")).click()
    _wait(browser).until(lambda d: d.find_element(*_css("tab-overview")).get_attribute("aria-selected") == "true")
    step_count = _settled_text(browser, "step-count")

    # The page shows the step count that the backend computed for the selected span.
    worker, span = _selected(browser, "worker-picker"), _selected(browser, "span-picker")
    query = urllib.parse.urlencode({"run": RUN, "worker": worker, "span": span})
    overview = serve_server.get_json(f"{ROUTES}/overview?{query}")
    assert isinstance(overview, dict) and "error" not in overview, overview
    assert len(overview["steps"]) > 0
    assert step_count == str(len(overview["steps"])), (step_count, len(overview["steps"]))
    # The step-time breakdown names its categories; this CPU-only training loop spends its steps on the host.
    assert "CPU Exec" in _settled_text(browser, "breakdown-legend")

    # Nothing the page needs was refused by its Content-Security-Policy, and nothing failed to load.
    severe = [entry["message"] for entry in browser.get_log("browser") if entry.get("level") == "SEVERE"]
    assert not severe, severe
    screenshot("serve-overview")


def test_ctrl_c_stops_the_server(tmp_path: Path) -> None:
    logdir = tmp_path / "empty-logdir"
    logdir.mkdir()
    server = _start(logdir, tmp_path)
    try:
        server.process.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal sends
        assert server.process.wait(timeout=STOP_TIMEOUT_S) == 0, server.log_tail()
        assert "Profscope stopped" in server.log_tail()
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(f"{server.url}/", timeout=5)
    finally:
        _stop(server.process)
