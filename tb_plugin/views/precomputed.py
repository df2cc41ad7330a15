"""Route answers computed once per parsed trace and kept beside its cache file.

The parser pool computes the default answer of the heaviest routes right after a parse
(``precompute``); a route then reads it instead of analysing a large trace on the request
thread (``answer``). Answers are JSON, tagged with ``VIEWS_VERSION``: a Profscope whose views
changed ignores older answers and computes afresh.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Optional

from ..cache import derived_path
from ..model.trace_model import TraceModel

# Bump when any precomputed view's output changes shape or meaning.
VIEWS_VERSION = 5  # 2: memory curves run to the span end, Gloo message sizes; 3: accounting (communication, overlap, device busy), CPU stub steps; 4: device names and kinds, figures null with reasons, kernel rows by operator type; 5: kernels within the steps
SUFFIX = "views.json"


def _key_text(key: tuple[Any, ...]) -> str:
    return json.dumps(list(key))


def _stored(model: TraceModel) -> dict[str, Any]:
    def load() -> dict[str, Any]:
        path = derived_path(model, SUFFIX)
        if not path or not os.path.exists(path):
            return {}
        try:
            with open(path, "rb") as f:
                doc = json.load(f)
        except (OSError, ValueError):
            return {}
        return doc.get("views", {}) if doc.get("version") == VIEWS_VERSION else {}

    return model.memo("precomputed_views", load)


def answer(model: TraceModel, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """The stored answer for ``key`` if the parser pool left one, else ``compute()`` (memoised)."""
    stored = _stored(model).get(_key_text(key))
    if stored is not None:
        return stored
    return model.memo(key, compute)


def precompute(model: TraceModel, views: dict[tuple[Any, ...], Callable[[], Any]]) -> Optional[str]:
    """Compute ``views`` and store them beside the model's cache file (atomically)."""
    path = derived_path(model, SUFFIX)
    if not path:
        return None
    from ..http import to_json_bytes

    body = {"version": VIEWS_VERSION, "views": {}}
    for key, compute in views.items():
        body["views"][_key_text(key)] = json.loads(to_json_bytes(compute()))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(body, out)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
