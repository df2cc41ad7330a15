"""The frontend's JSON test fixtures are what the backend answers now.

``scripts/make_frontend_fixtures.py`` asks the plugin's routes on traces of tests/data and writes the answers to
``frontend/test/fixtures``; this test asks again and fails, naming the fixtures and the script, when an answer
changed and the fixtures were not made again (the frontend's tests would otherwise test answers the backend no
longer gives). It also makes the answers twice to check that the script is deterministic.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from conftest import REPO
from openapi_contract import check_answer

SCRIPT = REPO / "scripts" / "make_frontend_fixtures.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_frontend_fixtures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_fixtures_are_the_backends_answers_now() -> None:
    script = _script()
    texts = script.fixture_texts()
    folder = script.FIXTURES
    stale = sorted(name for name, text in texts.items()
                   if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text)
    extra = sorted(p.name for p in folder.glob("*.json") if p.name not in texts)
    assert not stale and not extra, (
        f"frontend/test/fixtures differ from the backend's answers: {stale + extra}; make them again with "
        f"`.venv/bin/python scripts/make_frontend_fixtures.py` and check the frontend's tests (npm test)")
    assert script.fixture_texts() == texts, "two runs of the fixture script gave different files"


def test_every_fixture_is_an_answer_of_the_contract() -> None:
    import json

    script = _script()
    for fixture in script.FIXTURE_LIST:
        check_answer(fixture.route, 200, json.loads((script.FIXTURES / fixture.name).read_text(encoding="utf-8")))
    analyses = json.loads((script.FIXTURES / "analyses_handmade.json").read_text(encoding="utf-8"))
    for name in script.ANALYSES:
        check_answer(f"analyses/{name}", 200, analyses[name])
