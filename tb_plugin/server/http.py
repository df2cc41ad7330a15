"""HTTP plumbing shared by the routes: JSON responses, errors with a status, parameters.

Routes raise ``HttpError`` (or the run manager's exceptions) and ``json_route`` turns
them into JSON responses in one place, so every route answers errors the same way.
"""

from __future__ import annotations

import functools
import gzip
import logging
from typing import Any, Callable, Optional

import msgspec
from werkzeug import wrappers

from ..model.trace_model import DamagedModel
from ..store.spans import SpanFailed, SpanLoading, UnknownSpan
from ..views.encoding import to_json_bytes

logger = logging.getLogger(__name__)
_encoder = msgspec.json.Encoder()
_GZIP_MIN_BYTES = 4096


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_response(request: wrappers.Request, payload: Any, status: int = 200) -> wrappers.Response:
    body = to_json_bytes(payload)
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if len(body) >= _GZIP_MIN_BYTES and "gzip" in request.headers.get("Accept-Encoding", ""):
        body = gzip.compress(body, compresslevel=3)
        headers["Content-Encoding"] = "gzip"
    return wrappers.Response(body, status=status, content_type="application/json", headers=headers)


def _error_response(request: wrappers.Request, exc: Exception) -> wrappers.Response:
    """The one place where exceptions become HTTP answers."""
    if isinstance(exc, HttpError):
        return json_response(request, {"error": str(exc)}, exc.status)
    if isinstance(exc, UnknownSpan):
        return json_response(request, {"error": str(exc)}, 404)
    if isinstance(exc, SpanFailed):
        return json_response(request, {"error": str(exc)}, 422)
    if isinstance(exc, SpanLoading):
        return json_response(request, {"status": "loading", "progress": exc.progress}, 202)
    if isinstance(exc, DamagedModel):  # found while answering: the span is parsed again (RunManager.resolve)
        return json_response(request, {"status": "loading", "progress": 0.0}, 202)
    logger.exception("profscope: %s failed", request.path)  # a bug in one view must not take TensorBoard down
    return json_response(request, {"error": "internal error; see TensorBoard's log"}, 500)


def json_route(handler: Callable[[wrappers.Request], Any]) -> Callable[..., Any]:
    """Wrap ``handler(request) -> payload`` into a WSGI app with the plugin's error semantics."""

    @wrappers.Request.application
    @functools.wraps(handler)
    def app(request: wrappers.Request) -> wrappers.Response:
        try:
            return json_response(request, handler(request))
        except Exception as exc:  # noqa: BLE001 - mapped to a status in _error_response
            return _error_response(request, exc)

    return app


def download_route(handler: Callable[[wrappers.Request], tuple[bytes, str, str]]) -> Callable[..., Any]:
    """Wrap ``handler(request) -> (body, content type, file name)`` into a download, same errors as JSON routes."""

    @wrappers.Request.application
    @functools.wraps(handler)
    def app(request: wrappers.Request) -> wrappers.Response:
        try:
            body, content_type, filename = handler(request)
        except Exception as exc:  # noqa: BLE001
            return _error_response(request, exc)
        return wrappers.Response(body, content_type=content_type, headers={
            "Content-Disposition": f'attachment; filename="{safe_filename(filename)}"', "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store"})

    return app


def safe_filename(name: str) -> str:
    """A file name fit for a Content-Disposition header (trace file names are untrusted)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:200] or "download"


def arg(request: wrappers.Request, name: str, default: Optional[str] = None, required: bool = False) -> Optional[str]:
    value = request.args.get(name, default)
    if required and value in (None, ""):
        raise HttpError(400, f"missing parameter {name!r}")
    if value is not None and len(value) > 4096:
        raise HttpError(400, f"parameter {name!r} is too long")
    return value


def choice(request: wrappers.Request, name: str, allowed: tuple[str, ...], default: str) -> str:
    value = request.args.get(name, default)
    if value not in allowed:
        raise HttpError(400, f"{name} must be one of {', '.join(allowed)}")
    return value
