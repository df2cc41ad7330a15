"""The one place that knows every answer (``views/answers.py``), and the Python API made of it.

* No module but the facade spells a cache key of a question, or asks ``stored_answers.answer`` itself: a key typed
  twice can differ, and a mistyped key silently skips the precomputed answer.
* ``profscope.open_trace`` answers what the routes answer, on real traces of ``tests/data``, and ``import profscope``
  works from an installed package without loading the plugin.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin.views import answers

from conftest import REPO, copy_trace, real_trace

MLP = "torch213/mlp_train_sched/worker0.1795303442092317655.pt.trace.json.gz"
RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
FACADE = REPO / "tb_plugin" / "views" / "answers.py"
QUESTIONS = {value for name, value in vars(answers).items() if name.isupper() and isinstance(value, str)}


def _is_key_tuple(node: ast.AST, questions: set[str]) -> bool:
    return isinstance(node, ast.Tuple) and bool(node.elts) and isinstance(node.elts[0], ast.Constant) \
        and node.elts[0].value in questions


def _key_places(tree: ast.AST) -> list[ast.AST]:
    """Where a key is used: an argument of a call, a dict key, a subscript, a comparison, the value of a name that
    says ``key``. (A tuple of names elsewhere, such as ``("operators", "kernels", "steps")`` listing tables, is not.)"""
    places: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            places += node.args + [keyword.value for keyword in node.keywords]
        elif isinstance(node, ast.Dict):
            places += [key for key in node.keys if key is not None]
        elif isinstance(node, ast.Subscript):
            places.append(node.slice)
        elif isinstance(node, ast.Compare):
            places += [node.left] + node.comparators
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("key" in ast.unparse(target).lower() for target in targets):
                places.append(node.value)
    return places


def key_spellings(source: str, questions: set[str]) -> list[str]:
    """Where ``source`` spells a question's cache key or looks up a stored answer itself: a tuple that starts with a
    question's name where a key is used, a memo keyed by a question's name, a call of ``stored_answers.answer``."""
    found = []
    tree = ast.parse(source)
    for node in _key_places(tree):
        if _is_key_tuple(node, questions):
            found.append(f"line {node.lineno}: key tuple {ast.unparse(node)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "memo" \
                and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in questions:
            found.append(f"line {node.lineno}: memo key {node.args[0].value!r}")
        elif isinstance(node, ast.Attribute) and node.attr == "answer" and isinstance(node.value, ast.Name) \
                and node.value.id == "stored_answers":
            found.append(f"line {node.lineno}: stored_answers.answer")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("stored_answers") \
                and any(alias.name == "answer" for alias in node.names):
            found.append(f"line {node.lineno}: imports stored_answers.answer")
    return found


def test_the_checker_finds_keys() -> None:
    planted = (
        "from ..model import stored_answers\n"
        "from ..model.stored_answers import answer\n"
        "def f(model):\n"
        "    stored_answers.answer(model, ('overview', None, 32), lambda: 1)\n"
        "    model.memo(('analyses.idle', None, 30.0), lambda: 2)\n"
        "    model.memo('memory', lambda: 3)\n"
        "    TRACKS_KEY = ('trace_tracks',)\n"
        "    stored = {('kernels', 'name'): 4}\n"
        "    tables = ('operators', 'kernels')  # names of tables, not a key\n"
        "    return model.memo(('not a question', 1), lambda: 5)\n"
    )
    assert len(key_spellings(planted, QUESTIONS)) == 7
    assert {"overview", "memory", "analyses.idle", "trace_tracks"} <= QUESTIONS


def test_no_module_but_the_facade_spells_a_key() -> None:
    modules = [path for folder in ("tb_plugin", "writer", "profscope") for path in sorted((REPO / folder).rglob("*.py"))]
    assert len(modules) > 100
    wrong = {str(path.relative_to(REPO)): found for path in modules if path != FACADE
             for found in [key_spellings(path.read_text(encoding="utf-8"), QUESTIONS)] if found}
    assert wrong == {}
    assert key_spellings(FACADE.read_text(encoding="utf-8"), QUESTIONS)  # the facade does, so the check can see one


def test_every_question_about_a_span_is_listed() -> None:
    """A public function of the facade that takes a span's model first is a method of ``open_trace(...)``."""
    span_questions = {
        name for name, fn in vars(answers).items()
        if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == answers.__name__
        and list(inspect.signature(fn).parameters)[:1] == ["model"]
    }
    assert span_questions - {"parser_answers"} == {fn.__name__ for fn in answers.SPAN_QUESTIONS}
    assert all(fn.__doc__ for fn in answers.SPAN_QUESTIONS)


def test_the_parser_stores_what_the_questions_look_up() -> None:
    """The stored answers, by key: a question asked with its default parameters finds them."""
    from profscope.tb_plugin.ingest.load import load_trace

    model = load_trace(str(real_trace(MLP)))
    keys = list(answers.parser_answers(model, 16))
    assert keys == [("operators", "name"), ("operators", "input_shape"), ("operators", "stack"),
                    ("overview", None, 16), ("kernels", "name"), ("kernels", "op_and_name"), ("memory",),
                    ("flamegraph", "host"), ("critical_path", None, 0), ("trace_tracks",),
                    ("work_summary",), ("span_facts",)]
    assert {answers.question_of(key) for key in keys} <= QUESTIONS


@pytest.fixture(scope="module")
def route_client(tmp_path_factory: pytest.TempPathFactory):
    from conftest import PluginClient

    root = tmp_path_factory.mktemp("answers")
    logdir = root / "logdir"
    copy_trace(real_trace(MLP), logdir / "mlp")
    copy_trace(real_trace(RESNET), logdir / "resnet")
    client = PluginClient(logdir, root / "cache")
    client.settle()
    yield client
    client.close()


def _route(client: Any, route: str, **params: Any) -> Any:
    status, body = client.get(route, **params)
    assert status == 200, (route, body)
    return body


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("trace, run", [(MLP, "mlp"), (RESNET, "resnet")])
def test_open_trace_answers_what_the_routes_answer(trace: str, run: str, route_client: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from profscope import open_trace

    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    t = open_trace(str(real_trace(trace)))
    assert t.name == Path(trace).name and t.model.framework == "pytorch"
    span = {"run": run, "worker": "worker0"}
    assert _json(t.overview(manifest={})) == _route(route_client, "overview", **span)
    assert _json(t.overview(marker="nope")) == {k: v for k, v in _route(
        route_client, "overview", step_marker="nope", **span).items() if k != "host_cpu"}
    for group_by in ("name", "input_shape", "stack"):
        assert _json(t.operators(group_by=group_by)) == _route(route_client, "operators", group_by=group_by, **span)
    assert _json(t.kernels("op_and_name")) == _route(route_client, "kernels", group_by="op_and_name", **span)
    assert _json(t.memory()) == _route(route_client, "memory", **span)
    assert _json(t.memory(min_bytes=1)) == _route(route_client, "memory", min_bytes=1, **span)
    assert _json(t.flamegraph("device")) == _route(route_client, "flamegraph", weight="device", **span)
    assert _json(t.critical_path()) == _route(route_client, "critical_path", **span)
    assert _json(t.tracks()) == _route(route_client, "trace/tracks", **span)
    assert _json(t.idle_time(kernel_wait_us=0)) == _route(route_client, "analyses/idle", kernel_wait_us=0, **span)
    assert _json(t.launches()) == _route(route_client, "analyses/launches", **span)
    assert _json(t.summary()) == _route(route_client, "summary", **span)
    # A second open reads the cached model: the same answers.
    assert _json(open_trace(str(real_trace(trace))).overview()) == _json(t.overview())


def test_compare_and_distributed_of_traces(route_client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from profscope import distributed, open_trace

    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    base, exp = open_trace(str(real_trace(RESNET))), open_trace(str(real_trace(MLP)), cache=False)
    ours = _json(base.compare(exp))
    route = _route(route_client, "compare", base_run="resnet", base_worker="worker0", exp_run="mlp",
                   exp_worker="worker0")
    for side in ("base", "exp"):  # the names differ: the file name here, run / worker / span there
        for field in ("run", "worker", "span"):
            ours[side].pop(field), route[side].pop(field)
    assert ours == route
    ranks = [open_trace(str(path)) for path in sorted(real_trace("torch213/ddp_gloo_2ranks").glob("*.pt.trace.json.gz"))]
    answer = distributed(ranks)
    assert [row["rank"] for row in answer["ranks"]] == [0, 1]


def test_a_trace_lists_its_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from profscope import Trace, open_trace
    from profscope.tb_plugin.ingest.load import TraceLoadError

    monkeypatch.setenv("PROFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    t = open_trace(str(real_trace(MLP)))
    assert isinstance(t, Trace)
    assert {fn.__name__ for fn in answers.SPAN_QUESTIONS} <= set(dir(t))
    assert t.overview.__doc__ == answers.overview.__doc__
    with pytest.raises(AttributeError, match="no question"):
        t.nope()
    bad = tmp_path / "bad.json"
    bad.write_text("not a trace")
    with pytest.raises(TraceLoadError):
        open_trace(str(bad))


def test_import_profscope_loads_nothing_else(tmp_path: Path) -> None:
    """From outside the repository (the installed package): ``import profscope`` loads no module of the plugin, nor
    does ``import profscope.writer`` besides the on-disk contract; ``open_trace`` is found on first use."""
    code = (
        "import sys, profscope\n"
        "def loaded(): return sorted(m for m in sys.modules if m.startswith('profscope.tb_plugin'))\n"
        "assert loaded() == [], loaded()\n"
        "import profscope.writer\n"
        "assert loaded() == ['profscope.tb_plugin', 'profscope.tb_plugin.layout'], loaded()\n"
        "from profscope import open_trace\n"
        "print(open_trace.__module__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "profscope.tb_plugin.reports.notebook"
