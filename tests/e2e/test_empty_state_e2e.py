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
