"""Fixtures for the end-to-end tests: a real TensorBoard process and headless Chromium.

* ``e2e_logdir``: a logdir built from the real traces of ``tests/data``: a torch-handler run (``mlp``), a nested run (``group/resnet``) and a run whose
  only file is a truncated gzip (``broken``).
* ``tensorboard_server``: ``tensorboard --logdir <e2e_logdir>`` on a free loopback port,
  from this interpreter's environment, with its own Profscope cache folder.
* ``browser``: Selenium driving Debian's ``/usr/bin/chromium`` through
  ``/usr/bin/chromedriver`` (so Selenium Manager never downloads a browser or driver).
* ``screenshot``: saves PNGs under the test's ``tmp_path`` and, when
  ``PROFSCOPE_SCREENSHOT_DIR`` is set, copies them there for a person to look at.

When a test fails, the report gets TensorBoard's log, the browser console and a
screenshot of the page. Missing prerequisites (Chromium, Selenium) skip
these tests, except that ``PROFSCOPE_REQUIRE_E2E=1`` (set by ``make test``) turns a missing
browser or Selenium into a failure so the browser tests cannot quietly stop running.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

import real_traces

from .harness import BROKEN_RUN, NESTED_RUN, TORCH_RUN, TensorBoardServer

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

REPO_ROOT = Path(__file__).resolve().parents[2]
# A private copy of tests/data with its stored-gzipped files restored (tests/real_traces.py).
REAL_TRACES = real_traces.root()
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

# Generous: a 2-core CI machine may be busy with other tests while TensorBoard starts.
SERVER_START_TIMEOUT_S = 90.0
POLL_INTERVAL_S = 0.25
PAGE_LOAD_TIMEOUT_S = 60.0

CHROMIUM_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    # The machine has no network beyond package registries: keep Chromium from trying.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,900",
)

# Which real traces make up the test logdir: run folder → (source folder, file-name glob).
RUN_SOURCES: dict[str, tuple[str, str]] = {
    TORCH_RUN: ("torch213/mlp_train_sched", "*.pt.trace.json.gz"),
    NESTED_RUN: ("kineto_resnet50/resnet50_num_workers_0", "*.pt.trace.json.gz"),
}
BROKEN_FILE = "worker0.1.pt.trace.json.gz"


def _require_e2e() -> bool:
    return os.environ.get("PROFSCOPE_REQUIRE_E2E") == "1"


def _missing_prerequisite(reason: str) -> None:
    """Skip, or fail when the caller asked for the browser tests to be required."""
    if _require_e2e():
        pytest.fail(f"{reason} (PROFSCOPE_REQUIRE_E2E=1; `make test` installs it)", pytrace=False)
    pytest.skip(reason)


# --- logdir ----------------------------------------------------------------------------


def _truncated_gzip(source: Path, keep_bytes: int) -> bytes:
    """The first bytes of a real gzipped trace: a stream that ends in the middle."""
    data = source.read_bytes()[:keep_bytes]
    # Check that it really is broken, so the test cannot pass on a file that loads.
    try:
        gzip.decompress(data)
    except EOFError:
        return data
    raise AssertionError(f"{keep_bytes} bytes of {source} still decompress")


@pytest.fixture(scope="session")
def e2e_logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logdir = tmp_path_factory.mktemp("e2e-logdir")
    for run, (source_folder, pattern) in RUN_SOURCES.items():
        sources = sorted(real_traces.path(source_folder).glob(pattern))
        assert sources, f"no {pattern} in tests/data/{source_folder}"
        run_folder = logdir / run
        run_folder.mkdir(parents=True)
        for source in sources:
            # Copies, not symlinks: a plugin may rightly refuse links that leave the logdir.
            # copy2 keeps the modification time: these are finished runs, not files that a
            # live job is still writing (which the plugin rightly waits for).
            shutil.copy2(source, run_folder / source.name)
    broken_folder = logdir / BROKEN_RUN
    broken_folder.mkdir()
    first_mlp_trace = sorted((REAL_TRACES / RUN_SOURCES[TORCH_RUN][0]).glob(RUN_SOURCES[TORCH_RUN][1]))[0]
    broken_file = broken_folder / BROKEN_FILE
    broken_file.write_bytes(_truncated_gzip(first_mlp_trace, 4096))
    # Old enough to count as complete: the file is broken for good, not half-written.
    stat = first_mlp_trace.stat()
    os.utime(broken_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return logdir


# --- TensorBoard -----------------------------------------------------------------------


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tensorboard_command(logdir: Path, port: int) -> list[str]:
    """TensorBoard from the environment that runs the tests (the repository's .venv)."""
    script = Path(sys.executable).with_name("tensorboard")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "tensorboard.main"]
    return launcher + ["--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop TensorBoard and whatever it started (its data server), by process group."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)
    except ProcessLookupError:
        pass


def _wait_until_serving(process: subprocess.Popen[bytes], port: int, log_path: Path) -> str | None:
    """None once ``/data/plugins_listing`` answers; else why TensorBoard is not serving."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    listing = f"http://127.0.0.1:{port}/data/plugins_listing"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return f"TensorBoard exited with code {process.returncode}"
        try:
            with urllib.request.urlopen(listing, timeout=5) as response:
                if response.status == 200:
                    json.loads(response.read())
                    return None
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            pass
        time.sleep(POLL_INTERVAL_S)
    return f"TensorBoard did not answer {listing} within {SERVER_START_TIMEOUT_S:.0f} s"


@contextlib.contextmanager
def running_tensorboard(logdir: Path, work: Path, extra_args: Sequence[str] = ()) -> Iterator[TensorBoardServer]:
    """A real `tensorboard` on a free loopback port over ``logdir``, with its own Profscope cache in ``work``.

    A free port can be taken between the probe and TensorBoard's bind, so it tries a few. The
    process (its own process group) is stopped on exit, and its log is printed then.
    """
    cache_dir = work / "profscope-cache"
    cache_dir.mkdir(exist_ok=True)
    env = dict(os.environ, PROFSCOPE_CACHE_DIR=str(cache_dir))
    failures: list[str] = []
    for attempt in range(3):
        port = _free_loopback_port()
        log_path = work / f"tensorboard-{attempt}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                _tensorboard_command(logdir, port) + list(extra_args),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=work,
                start_new_session=True,  # its own process group, so teardown stops all of it
            )
        problem = _wait_until_serving(process, port, log_path)
        server = TensorBoardServer(process, port, logdir, cache_dir, log_path)
        if problem is None:
            try:
                yield server
            finally:
                _stop(process)
                print(f"\n--- TensorBoard log ({log_path}) ---\n{server.log_tail(4000)}")
            return
        _stop(process)
        failures.append(f"attempt {attempt + 1} on port {port}: {problem}\n{server.log_tail()}")
    pytest.fail("TensorBoard did not start:\n" + "\n\n".join(failures), pytrace=False)


@pytest.fixture(scope="session")
def tensorboard_server(e2e_logdir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    with running_tensorboard(e2e_logdir, tmp_path_factory.mktemp("tensorboard")) as server:
        yield server


# --- browser ---------------------------------------------------------------------------


def chromium_driver(profile_dir: Path, driver_log: Path) -> "WebDriver":
    """Debian's Chromium through its own ChromeDriver (Selenium Manager never downloads anything),
    headless, with a fresh profile in ``profile_dir``; skips (or fails under PROFSCOPE_REQUIRE_E2E)
    when a prerequisite is missing."""
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        _missing_prerequisite(
            f"{CHROMIUM} or {CHROMEDRIVER} is missing (Debian packages chromium, chromium-driver; "
            "scripts/install_system_deps.sh installs them)"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing_prerequisite("selenium is not installed (pip install -e '.[test]')")

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in CHROMIUM_ARGUMENTS:
        options.add_argument(argument)
    options.add_argument(f"--user-data-dir={profile_dir}")
    # Keep the page's console messages, to show them when a test fails.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(driver_log))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT_S)
    return driver


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    driver = chromium_driver(tmp_path / "chromium-profile", tmp_path / "chromedriver.log")
    try:
        yield driver
    finally:
        driver.quit()


def _screenshot_name(test_name: str, label: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{test_name}-{label}")
    return f"{safe}.png"


def _save_screenshot(driver: WebDriver, folder: Path, test_name: str, label: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _screenshot_name(test_name, label)
    # Screenshots are taken of the top-level page, whichever frame the test is in.
    driver.switch_to.default_content()
    if not driver.get_screenshot_as_file(str(path)):
        raise AssertionError(f"could not save a screenshot to {path}")
    shared = os.environ.get("PROFSCOPE_SCREENSHOT_DIR")
    if shared:
        Path(shared).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(shared) / path.name)
    return path


@pytest.fixture
def screenshot(browser: WebDriver, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str], Path]:
    """``screenshot("label")`` saves the page as PNG and returns its path.

    It switches the driver back to the top-level page; switch into the plugin frame again
    to go on.
    """

    def take(label: str) -> Path:
        return _save_screenshot(browser, tmp_path / "screenshots", request.node.name, label)

    return take


# --- what a failure reports --------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed:
        _describe_failure(item, report)
    return report


def _describe_failure(item: pytest.Item, report: pytest.TestReport) -> None:
    """Adds TensorBoard's log, a screenshot and the browser console to a failed test's report."""
    funcargs = getattr(item, "funcargs", {})
    server = funcargs.get("tensorboard_server")
    if isinstance(server, TensorBoardServer):
        report.sections.append(("TensorBoard log", server.log_tail()))
    driver = funcargs.get("browser")
    tmp_path = funcargs.get("tmp_path")
    if driver is not None and isinstance(tmp_path, Path):
        try:
            shot = _save_screenshot(driver, tmp_path / "screenshots", item.name, "FAILED")
            console = "\n".join(f"{entry.get('level')} {entry.get('message')}" for entry in driver.get_log("browser"))
            report.sections.append(("browser", f"screenshot: {shot}\nconsole:\n{console or '(empty)'}"))
        except Exception as error:  # the browser itself may be what broke
            report.sections.append(("browser", f"could not capture the page: {error!r}"))
