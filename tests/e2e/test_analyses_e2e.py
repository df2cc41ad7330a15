"""The Analyses tab on a real GPU trace, read as a person reads it: a real TensorBoard, headless Chromium.

The span is a real ResNet training trace of another team (``hta/ns_resolution_trace``: one GPU stream, DDP, user
annotations with their GPU copies). Each section shows what its route computed: the host-wait share of the idle
time, the launch count, the stream's deepest queue, the most costly repeated kernel sequence and the annotations;
a row of the longest gaps opens the trace viewer at that gap.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from .conftest import REAL_TRACES, running_tensorboard
from .harness import TensorBoardServer
from .test_views_e2e import PLUGIN_FRAME, _css, _find, _open_view, _ready_runs, _route, _settled, _text, _top_row_cells, _wait

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUN = "resnet_ddp"
SOURCE = "hta/ns_resolution_trace"
# An NCCL rank with five streams of one GPU (HTA's ws128 trace, rank 0): the busiest is not the most idle.
STREAMS_RUN = "ws128_rank0"
STREAMS_SOURCE = "hta/sampled_ws128_trace_filter/sampled_rank-0.json.gz"


@pytest.fixture(scope="module")
def analyses_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TensorBoardServer]:
    logdir = tmp_path_factory.mktemp("analyses-logdir")
    (logdir / RUN).mkdir()
    for source in sorted((REAL_TRACES / SOURCE).glob("*.pt.trace.json.gz")):
        shutil.copy2(source, logdir / RUN / source.name)
    (logdir / STREAMS_RUN).mkdir()
    shutil.copy2(REAL_TRACES / STREAMS_SOURCE, logdir / STREAMS_RUN / Path(STREAMS_SOURCE).name)
    with running_tensorboard(logdir, tmp_path_factory.mktemp("analyses-tensorboard")) as server:
        yield server


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def test_the_analyses_page_shows_each_analysis(
    browser: "WebDriver", analyses_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    worker = _ready_runs(analyses_server, (RUN,))[RUN]["workers"][0]
    query = {"run": RUN, "worker": worker["name"], "span": worker["spans"][0]}
    idle = _route(analyses_server, "analyses/idle", **query)
    launches = _route(analyses_server, "analyses/launches", **query)
    queues = _route(analyses_server, "analyses/queues", **query)
    sequences = _route(analyses_server, "analyses/sequences", **query)
    annotations = _route(analyses_server, "analyses/annotations", **query)
    assert idle["available"] and launches["available"] and queues["available"] and sequences["available"]

    _open_view(browser, analyses_server, RUN, "analyses")
    [stream] = idle["streams"]
    assert _text(browser, "analysis-idle-host-share") == _percent(stream["host_wait"] / stream["idle"])
    assert _text(browser, "analysis-idle-busiest").startswith(stream["stream"])
    assert _text(browser, "analysis-launches-count").startswith(f"{launches['launches']:,}")
    assert _text(browser, "analysis-launches-short").endswith(f"({_percent(launches['short_share'])})")
    assert _top_row_cells(browser, "analysis-queues-streams")["max"] == f"{queues['streams'][0]['max']:,}"
    top = _top_row_cells(browser, "analysis-sequences-table")
    assert top["operator"] == sequences["sequences"][0]["operator"]
    assert top["count"] == f"{sequences['sequences'][0]['count']:,}"
    assert _top_row_cells(browser, "analysis-annotations-table")["name"] == annotations["rows"][0]["name"]
    _find(browser, "analysis-idle-chart")
    _find(browser, "analysis-launches-hist-delay")
    from selenium.webdriver.common.by import By
    screenshot("analyses")
    for section in ("launches", "queues", "annotations"):  # the rest of the page, a section at a time
        browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))  # a screenshot leaves the frame
        browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", _find(browser, f"analysis-{section}"))
        screenshot(f"analyses-{section}")

    # The longest gap opens the trace viewer at that gap.

    def first_gap(d: "WebDriver") -> object:
        table = d.find_element(*_css("analysis-idle-gaps"))
        rows = table.find_elements(By.CSS_SELECTOR, ".ps-vtable-row[data-index='0']")
        return rows[0] if rows else None

    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))  # the screenshot left it
    row = _settled(browser, first_gap)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", row)
    _wait(browser).until(lambda d: d.find_element(*_css("tab-trace")).get_attribute("aria-selected") == "true")
    screenshot("analyses-gap-in-trace")


def test_the_idle_time_leads_with_the_busiest_stream(
    browser: "WebDriver", analyses_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    """Five streams, the side ones nearly idle and mostly waiting on the host: the headline is the busiest stream's
    host wait (84.5%), not the share over all streams (63.6%); the table starts with it and has a share per stream."""
    worker = _ready_runs(analyses_server, (STREAMS_RUN,))[STREAMS_RUN]["workers"][0]
    idle = _route(analyses_server, "analyses/idle", run=STREAMS_RUN, worker=worker["name"], span=worker["spans"][0])
    busiest = max(idle["streams"], key=lambda s: s["busy"])
    overall = sum(s["host_wait"] for s in idle["streams"]) / sum(s["idle"] for s in idle["streams"])
    assert len(idle["streams"]) == 5 and _percent(busiest["host_wait"] / busiest["idle"]) != _percent(overall)

    _open_view(browser, analyses_server, STREAMS_RUN, "analyses")
    assert _text(browser, "analysis-idle-host-share") == _percent(busiest["host_wait"] / busiest["idle"])
    assert _text(browser, "analysis-idle-busiest").startswith(f"{busiest['stream']} · busy")
    top = _top_row_cells(browser, "analysis-idle-streams")
    assert top["stream"] == busiest["stream"], top
    assert top["host_wait_share"] == _percent(busiest["host_wait_share"]), top
    screenshot("analyses-idle-streams")


def test_a_cut_table_cell_shows_its_whole_text_on_hover(
    browser: "WebDriver", analyses_server: TensorBoardServer, screenshot: Callable[[str], Path]
) -> None:
    """Every operator of the kernel sequences reads "autograd::engine::ev…" in its column: hovering one shows the
    whole name in the tooltip (any virtual table, not this one only)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    worker = _ready_runs(analyses_server, (RUN,))[RUN]["workers"][0]
    sequences = _route(analyses_server, "analyses/sequences", run=RUN, worker=worker["name"], span=worker["spans"][0])
    _open_view(browser, analyses_server, RUN, "analyses")
    _top_row_cells(browser, "analysis-sequences-table")  # drawn
    table = _find(browser, "analysis-sequences-table")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", table)
    cell = table.find_element(By.CSS_SELECTOR, ".ps-vtable-row[data-index='0'] .ps-vtable-td")
    whole = sequences["sequences"][0]["operator"]
    assert cell.get_attribute("textContent") == whole
    assert browser.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", cell), "the name fits: nothing to test"
    ActionChains(browser).move_to_element(cell).perform()
    tooltip = _wait(browser).until(lambda d: next((e for e in d.find_elements(By.ID, "ps-tooltip") if e.is_displayed()), None))
    assert tooltip.text == whole
    screenshot("analyses-cut-cell-tooltip")
    # A cell that fits gets no tooltip: the count column of the same row.
    browser.switch_to.frame(browser.find_element(By.CSS_SELECTOR, PLUGIN_FRAME))
    count = _find(browser, "analysis-sequences-table").find_element(
        By.CSS_SELECTOR, ".ps-vtable-row[data-index='0'] .ps-vtable-td:nth-child(3)")
    ActionChains(browser).move_to_element(count).perform()
    _wait(browser).until(lambda d: not any(e.is_displayed() for e in d.find_elements(By.ID, "ps-tooltip")))
    assert count.get_attribute("data-tip") is None
