"""A logdir with no runs, as a person opens it: TensorBoard's PROFSCOPE tab says what it looked for, which files
it skipped and why, and how to write or import runs (the runs route's ``skipped`` and ``looked_for``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from .conftest import running_tensorboard
from .harness import TensorBoardServer
from .test_browser import _by_testid, _open_profscope, _wait

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _logdir_without_runs(root: Path) -> Path:
    """A training job's logdir with scalars, a configuration and notes, but no profiler trace."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    logdir = root / "logdir"
    run = logdir / "exp1"
    run.mkdir(parents=True)
    writer = EventFileWriter(str(run))
    for step in range(3):
        value = summary_pb2.Summary.Value(tag="loss", simple_value=1.0 / (step + 1))
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))
    writer.close()
    (run / "config.json").write_text('{"lr": 0.1, "batch_size": 32}')
    (run / "notes.txt").write_text("baseline run")
    return logdir


@pytest.fixture(scope="module")
def empty_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    root = tmp_path_factory.mktemp("empty-logdir")
    with running_tensorboard(_logdir_without_runs(root), root) as server:
        yield server


def test_the_empty_page_says_what_was_looked_for_and_skipped(
    browser: WebDriver, empty_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    answer = empty_server.get_json("/data/plugin/profscope/runs")
    assert isinstance(answer, dict) and answer["runs"] == []
    _open_profscope(browser, empty_server)
    page = _wait(browser).until(lambda d: next(iter(d.find_elements(*_by_testid("empty-no-runs"))), None))
    skipped = _wait(browser).until(lambda d: next(iter(d.find_elements(*_by_testid("skipped-files"))), None))
    # The numbers are the route's: one event file, one JSON that is no trace, one other file.
    reasons = answer["skipped"]["reasons"]
    assert reasons == {"not_a_chrome_trace": 1, "not_json": 1, "tensorboard_event_file": 1}, reasons
    assert "3 files were looked at and skipped" in page.text
    items = skipped.text.splitlines()
    assert any(line.startswith("1 TensorBoard event file (exp1/events.out.tfevents.") for line in items), items
    assert "1 JSON file that is not a Chrome trace (exp1/config.json)" in items
    assert "1 file that is not .json or .json.gz (exp1/notes.txt)" in items
    layouts = browser.find_element(*_by_testid("layouts-looked-for")).text.splitlines()
    assert len(layouts) == len(answer["looked_for"])
    assert any("pt.trace.json" in line and "tensorboard_trace_handler" in line for line in layouts), layouts
    assert any("trace.json" in line and "export_chrome_trace" in line for line in layouts), layouts
    command = browser.find_element(*_by_testid("import-command")).text
    assert command.startswith("profscope import ") and "--logdir" in command
    screenshot("empty-logdir")


def _logdir_with_a_run_and_skipped_files(root: Path) -> Path:
    """A run that loads beside a harness trace whose header runs past what discovery reads, a configuration and an
    event file."""
    import gzip
    import os

    from conftest import real_trace

    logdir = _logdir_without_runs(root)
    trace = real_trace("torch213/conv_cpu_memory/worker0.1795303453480506115.pt.trace.json.gz")
    run = logdir / "conv"
    run.mkdir()
    (run / trace.name).write_bytes(trace.read_bytes())
    harness = logdir / "harness"
    harness.mkdir()
    long_header = b'{"metadata": {"log": "' + b"x" * ((16 << 20) + 1) + b'"}, "traceEvents": []}'
    (harness / "<b>step.json.gz").write_bytes(gzip.compress(long_header, 1))
    for path in (run / trace.name, harness / "<b>step.json.gz"):
        os.utime(path, (1e9, 1e9))
    return logdir


@pytest.fixture(scope="module")
def skipping_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    root = tmp_path_factory.mktemp("skipping-logdir")
    with running_tensorboard(_logdir_with_a_run_and_skipped_files(root), root) as server:
        yield server


def test_the_run_list_says_what_was_skipped_beside_runs(
    browser: WebDriver, skipping_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    deadline = time.monotonic() + 60
    answer: object = None
    while time.monotonic() < deadline:
        answer = skipping_server.get_json("/data/plugin/profscope/runs")
        if isinstance(answer, dict) and answer.get("runs"):
            break
        time.sleep(0.5)
    assert isinstance(answer, dict) and [run["name"] for run in answer["runs"]] == ["conv"], answer
    reasons = answer["skipped"]["reasons"]
    assert reasons == {"no_trace_key_in_sniff_limit": 1, "not_a_chrome_trace": 1, "not_json": 1,
                       "tensorboard_event_file": 1}, reasons
    _open_profscope(browser, skipping_server)
    box = _wait(browser).until(lambda d: next(iter(d.find_elements(*_by_testid("run-list-skipped"))), None))
    _wait(browser).until(lambda d: box.is_displayed())
    count = browser.find_element(*_by_testid("run-list-skipped-count"))
    assert count.text == "4 files skipped"
    assert browser.find_elements(*_by_testid("run-entry"))  # the runs are there too
    assert not browser.find_element(*_by_testid("skipped-files")).is_displayed()  # collapsed
    count.click()
    listed = _wait(browser).until(lambda d: box.find_element(*_by_testid("skipped-files")))
    _wait(browser).until(lambda d: listed.is_displayed())
    items = listed.text.splitlines()
    assert ("1 JSON file with no trace key in its first 16 MB (profscope import reads it whole) "
            "(harness/<b>step.json.gz)") in items, items  # a path from the logdir, as text
    assert "1 JSON file that is not a Chrome trace (exp1/config.json)" in items, items
    assert not browser.find_elements("css selector", ".ps-runs-skipped b")  # never HTML
    screenshot("run-list-skipped")
