"""The first answers a parser process derives, half of them in a forked child: the stored files are the same bytes as
derived in one process, and a child that fails or cannot start costs time, never an answer."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import pytest

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model.array_file import read_model, write_model
from profscope.tb_plugin.model.trace_model import TraceModel
from profscope.tb_plugin.store import precomputed
from profscope.tb_plugin.views import operators, overview, stacks
from profscope.tb_plugin.views.trace import critical_path

from conftest import real_trace

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


@pytest.fixture(scope="module")
def parsed() -> TraceModel:
    return load_trace(str(real_trace(RESNET)))


def _derived_files(model: TraceModel, folder: Path, fork: bool) -> dict[str, str]:
    folder.mkdir()
    path = folder / "span.model"
    write_model(str(path), model)
    precomputed.derive(read_model(str(path)), 32, fork=fork)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p != path}


def test_forked_derivation_stores_the_same_bytes(parsed: TraceModel, tmp_path: Path) -> None:
    alone = _derived_files(parsed, tmp_path / "alone", fork=False)
    forked = _derived_files(parsed, tmp_path / "forked", fork=True)
    assert set(alone) == {"span.model.views.json", "span.model.lod"}
    assert forked == alone  # and no hand-off file is left behind


def test_a_failing_child_costs_time_not_answers(parsed: TraceModel, tmp_path: Path, monkeypatch, caplog) -> None:
    alone = _derived_files(parsed, tmp_path / "alone", fork=False)
    parent = os.getpid()
    flamegraph = stacks.flamegraph

    def fails_in_the_child(*args, **kwargs):
        if os.getpid() != parent:
            raise MemoryError("the child ran out of memory")
        return flamegraph(*args, **kwargs)

    monkeypatch.setattr(stacks, "flamegraph", fails_in_the_child)
    with caplog.at_level(logging.WARNING, logger=precomputed.logger.name):
        assert _derived_files(parsed, tmp_path / "failed", fork=True) == alone
    assert "derivation child failed" in caplog.text


def test_no_fork_no_loss(parsed: TraceModel, tmp_path: Path, monkeypatch, caplog) -> None:
    alone = _derived_files(parsed, tmp_path / "alone", fork=False)

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(precomputed.os, "fork", no_fork)
    with caplog.at_level(logging.WARNING, logger=precomputed.logger.name):
        assert _derived_files(parsed, tmp_path / "unforked", fork=True) == alone
    assert "could not fork" in caplog.text


class Interrupted(BaseException):
    """What stops a derivation (not a view's error, which costs that answer only)."""


def test_a_failing_parent_reaps_its_child(parsed: TraceModel, tmp_path: Path, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise Interrupted("the parser process is stopped")

    forked: list[int] = []
    fork = os.fork

    def recorded_fork() -> int:
        pid = fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(overview, "overview", broken)
    monkeypatch.setattr(precomputed.os, "fork", recorded_fork)
    folder = tmp_path / "cache"
    folder.mkdir()
    write_model(str(folder / "span.model"), parsed)
    with pytest.raises(Interrupted):
        precomputed.derive(read_model(str(folder / "span.model")), 32, fork=True)
    assert not any(p.name.startswith(".tmp-") for p in folder.iterdir())  # the hand-off file is gone
    assert len(forked) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)  # and the child was reaped


@pytest.mark.parametrize("fork", [False, True])
def test_a_failing_view_costs_its_answer_only(parsed: TraceModel, tmp_path: Path, monkeypatch, caplog,
                                              fork: bool) -> None:
    """A view that fails on a trace (in the child and again in the parent) is left out; every other answer is
    stored, the same bytes as without the failure, and the failing one is computed on request."""
    from profscope.tb_plugin.model.stored_answers import _stored

    folder = tmp_path / "cache"
    folder.mkdir()
    write_model(str(folder / "span.model"), parsed)
    alone = read_model(str(folder / "span.model"))
    precomputed.derive(alone, 32)
    expected = dict(_stored(alone))

    def broken(*args, **kwargs):
        raise IndexError("a bug in a view")

    monkeypatch.setattr(critical_path, "critical_path", broken)
    monkeypatch.setattr(operators, "operators", broken)
    (folder / "span.model.views.json").unlink()
    with caplog.at_level(logging.WARNING, logger=precomputed.logger.name):
        model = read_model(str(folder / "span.model"))
        precomputed.derive(model, 32, fork=fork)
    stored = dict(_stored(read_model(str(folder / "span.model"))))
    lost = {key for key in expected if key.startswith(('["critical_path"', '["operators"'))}
    assert len(lost) == 4 and set(stored) == set(expected) - lost
    assert all(stored[key] == expected[key] for key in stored)
    assert "deriving the answer" in caplog.text
