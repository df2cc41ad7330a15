"""A table route: JSON as always, or with ``format=csv`` the table the page shows as a CSV download.

``table_route(handler, route)`` wraps a JSON route's handler. With ``format=csv`` the handler's
answer goes through ``views.table_csv`` with the page's ``sort``, ``filter`` and ``table`` parameters
(the route's own parameters, such as ``group_by``, have already shaped the answer); errors,
including 202 while the span loads, are answered exactly as for JSON.
"""

from __future__ import annotations

from typing import Any, Callable

from werkzeug import wrappers

from ..views import table_csv as export
from .http import HttpError, arg, download_route, json_route

FORMATS = ("json", "csv")


def _file_name(route: str, table: export.Table, request: wrappers.Request) -> str:
    """``operators-<run>-<worker>-<span>.csv`` (made header-safe by the download wrapper)."""
    parts = [table.name] + [request.args.get(key, "") for key in ("run", "worker", "span")]
    return "-".join(p.replace("/", "_") for p in parts if p) + ".csv"


def table_route(handler: Callable[[wrappers.Request], Any], route: str) -> Callable[..., Any]:
    json_app = json_route(handler)

    def csv_handler(request: wrappers.Request) -> tuple[bytes, str, str]:
        answer = handler(request)
        try:
            table = export.table_of(route, answer, arg(request, "table") or None)
        except export.ExportError as exc:
            raise HttpError(400, str(exc)) from None
        text = export.to_csv(table, arg(request, "sort"), arg(request, "filter") or "")
        return text.encode("utf-8"), "text/csv; charset=utf-8", _file_name(route, table, request)

    def bad_format(request: wrappers.Request) -> Any:
        raise HttpError(400, f"format must be one of {', '.join(FORMATS)}")

    csv_app = download_route(csv_handler)
    bad_format_app = json_route(bad_format)

    @wrappers.Request.application
    def app(request: wrappers.Request) -> Any:
        fmt = request.args.get("format", "json")
        if fmt == "csv":
            return csv_app
        if fmt not in FORMATS:
            return bad_format_app
        return json_app

    return app
