"""A name too long for any answer, in the trace viewer: the side panel says how much was cut and shows it whole.

The trace is a real torch 2.13 trace (``torch213/mlp_train_sched``) with one more operator inside its first step,
named by 150,000 characters. Every answer cuts it at 65,536 characters ("… (84,470 more characters)"); the side
panel offers "show whole name", which asks ``trace/event?full_text=1`` and shows the whole name in a box; a cut
argument of the same operator has its own button.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer
from .test_views_e2e import _css, _find, _ready_runs, _wait

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "long_name"
NAME = "aten::" + "n" * 149_994  # 150,000 characters
LONG_ARGUMENT = "c" * 100_000  # an argument cut the same way, shown whole on request
SEED = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"


@pytest.fixture(scope="module")
def long_name_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("long-name-logdir")
    doc = json.loads(gzip.decompress((REAL_TRACES / SEED).read_bytes()))
    events = doc["traceEvents"]
    step = next(e for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    events.insert(len(events) // 2, {"ph": "X", "cat": "cpu_op", "name": NAME, "pid": step["pid"], "tid": step["tid"],
                                     "ts": step["ts"] + 1, "dur": 2,
                                     "args": {"External id": 987654321, "Concrete Inputs": ["", LONG_ARGUMENT]}})
    trace = logdir / RUN / "worker0.1.pt.trace.json"
    trace.parent.mkdir()
    trace.write_text(json.dumps(doc))
    os.utime(trace, (1e9, 1e9))  # a finished file
    with running_tensorboard(logdir, tmp_path_factory.mktemp("long-name-tensorboard")) as server:
        yield server


def test_the_side_panel_shows_a_cut_name_whole_on_request(
    browser: "WebDriver", long_name_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec

    _ready_runs(long_name_server, (RUN,))
    browser.get(f"{long_name_server.url}/#profscope&p.profscope.view=trace&p.profscope.run={RUN}")
    _wait(browser).until(ec.frame_to_be_available_and_switch_to_it(
        (By.CSS_SELECTOR, "iframe[src*='plugin_entry.html?name=profscope']")))
    _find(browser, "trace-search-input").send_keys("aten::nnnnnnnn", Keys.ENTER)
    details = _wait(browser).until(lambda d: d.find_element(*_css("trace-details"))
                                   if d.find_element(*_css("trace-details")).get_attribute("data-state") == "ready" else None)
    shown = details.find_element(*_css("trace-details-name")).get_attribute("textContent")
    assert shown.endswith("… (84,464 more characters)") and shown.startswith("aten::nnn"), shown[-60:]
    button = details.find_element(*_css("trace-details-whole"))
    assert button.text == "Show whole name (84,464 more characters)"
    button.click()
    whole = _wait(browser).until(lambda d: next(iter(d.find_elements(*_css("trace-details-whole-name"))), None))
    assert whole.get_attribute("textContent") == NAME
    # In a box that scrolls, not a page 150,000 characters tall.
    assert whole.size["height"] <= 260, whole.size
    # A cut argument: its own button, which shows that argument whole (the model keeps it as JSON text).
    (argument,) = details.find_elements(*_css("trace-details-whole-arg"))
    assert argument.text == "Show whole value (34,471 more characters)"
    argument.click()
    value = _wait(browser).until(lambda d: next(iter(d.find_elements(*_css("trace-details-whole-value"))), None))
    assert json.loads(value.get_attribute("textContent")) == ["", LONG_ARGUMENT]
    assert value.size["height"] <= 260, value.size
    browser.execute_script("arguments[0].scrollIntoView({block: \"center\"})", value)
    screenshot("whole-name-and-argument")
