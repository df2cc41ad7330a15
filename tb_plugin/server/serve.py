"""``profscope serve``: Profscope's page and routes without TensorBoard.

For people who do not run TensorBoard (Paddle/VisualDL, MindSpore): the plugin's own WSGI
apps answer under ``/data/plugin/profscope/`` exactly as inside TensorBoard, and a minimal
page at ``/`` loads the same ES module (``frontend/README.md``, "How the bundle is loaded").

Routing is a small dispatcher of our own rather than ``TensorBoardWSGI([plugin])``: that
class also serves TensorBoard's ``/data/plugins_listing`` and ``plugin_entry.html``, redirects
and rewrites paths in its middlewares (experiment ids, path prefix) and has no page at ``/``
without TensorBoard's frontend. The matching rules are TensorBoard's: a plugin route is an
exact path, or a ``/.../*`` prefix (``/static/*``); one trailing slash is ignored.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import logging
import signal
import socket
import sys
import types
from typing import Any, Callable, Iterable, Optional, Sequence, TextIO

from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from .. import layout
from .plugin import ProfscopePlugin

# (environ, start_response) -> body: the plugin's apps and this module's are plain WSGI callables.
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

ROUTE_PREFIX = f"/data/plugin/{layout.PLUGIN_NAME}"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 6007  # TensorBoard's 6006 + 1, so both can run side by side

# The bundle's API base resolves to /data/plugin/profscope/ for a page at / (frontend/README.md).
PAGE_SCRIPT = f'import(".{ROUTE_PREFIX}/index.js").then((m) => m.render());'
PAGE_HTML = (
    "<!doctype html>\n"
    '<html lang="en">\n'
    "<head>\n"
    '<meta charset="utf-8">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    "<title>Profscope</title>\n"
    '<link rel="icon" href="data:,">\n'  # no icon: keeps the browser from asking for /favicon.ico
    "</head>\n"
    "<body>\n"
    f'<script type="module">{PAGE_SCRIPT}</script>\n'
    "</body>\n"
    "</html>\n"
)


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


# Only this origin: the inline loader by its hash, the bundle and its API from 'self'. The
# bundle adds <style> elements and inline styles (charts), hence 'unsafe-inline' for styles only.
CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'none'",
    f"script-src 'self' {_script_hash(PAGE_SCRIPT)}",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'self'",
    "form-action 'none'",
    "frame-ancestors 'none'",
))
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _text_response(message: str, status: int) -> wrappers.Response:
    return wrappers.Response(
        message, status=status, content_type="text/plain; charset=utf-8", headers={"X-Content-Type-Options": "nosniff"}
    )


def _has_dot_segment(path: str) -> bool:
    """A ``.`` or ``..`` segment, a backslash or a NUL: never part of a route we serve."""
    return "\\" in path or "\x00" in path or any(segment in (".", "..") for segment in path.split("/"))


class ServeApp:
    """The WSGI app of ``profscope serve``: the page at ``/`` and the plugin's routes under ROUTE_PREFIX."""

    def __init__(self, plugin: ProfscopePlugin) -> None:
        self.plugin = plugin
        self._exact: dict[str, WsgiApp] = {}
        prefixes: dict[str, WsgiApp] = {}
        for route, app in plugin.get_plugin_apps().items():
            path = ROUTE_PREFIX + route
            if path.endswith("/*"):
                prefixes[path[:-1]] = app  # keep the slash: "/static/*" matches "/static/<name>"
            else:
                self._exact[path] = app
        # Longest prefix first, so that a more specific route wins (as in TensorBoard).
        self._prefixes = sorted(prefixes.items(), key=lambda item: len(item[0]), reverse=True)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        return self._route(environ)(environ, start_response)

    def _route(self, environ: dict[str, Any]) -> WsgiApp:
        path = wrappers.Request(environ).path  # percent-decoded, so "%2e%2e" is seen as ".."
        if path == "/":
            return self._page(environ)
        if _has_dot_segment(path):
            return _text_response("not found", 404)
        if path.endswith("/"):
            path = path[:-1]
        app = self._exact.get(path)
        if app is not None:
            return app
        for prefix, prefix_app in self._prefixes:
            if path.startswith(prefix) and len(path) > len(prefix):
                return prefix_app
        return _text_response("not found", 404)

    @staticmethod
    def _page(environ: dict[str, Any]) -> WsgiApp:
        if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
            response = _text_response("method not allowed", 405)
            response.headers["Allow"] = "GET, HEAD"
            return response
        return wrappers.Response(PAGE_HTML, content_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


def build_app(logdir: str, cache_dir: Optional[str] = None, refresh_seconds: float = 5.0,
              link_roots: Optional[Sequence[str]] = None, device_peaks: Optional[str] = None,
              packs: Optional[str] = None) -> ServeApp:
    """The serve app over `logdir`; the plugin's run manager starts on the first request.

    ``link_roots``: folders outside the logdir that its symlinks may lead into (default: PROFSCOPE_LINK_ROOTS).
    ``device_peaks``: a JSON file of device peaks (views/quantities/device_peaks.py; default: PROFSCOPE_DEVICE_PEAKS).
    Parse deadline and memory budget come from PROFSCOPE_PARSE_TIMEOUT_SECONDS and PROFSCOPE_PARSE_MEMORY_GB.
    """
    # No flags and no data provider: the plugin then finds runs by scanning the logdir only.
    context = base_plugin.TBContext(logdir=logdir, flags=None, data_provider=None)
    return ServeApp(ProfscopePlugin(context, cache_dir=cache_dir, refresh_seconds=refresh_seconds,
                                    link_roots=link_roots, device_peaks=device_peaks, packs=packs))


def display_url(host: str, port: int) -> str:
    """The address to open; an IPv6 host goes in brackets, a wildcard host becomes the loopback one."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ServeError(Exception):
    """The server could not start (the port is taken, the host is not an address of this machine)."""


def _stop_on_sigterm(_signum: int, _frame: Optional[types.FrameType]) -> None:
    # serve_forever() treats KeyboardInterrupt as "stop": a SIGTERM ends the server as Ctrl-C does.
    raise KeyboardInterrupt


def serve(
    logdir: str,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    cache_dir: Optional[str] = None,
    out: TextIO = sys.stdout,
    link_roots: Optional[Sequence[str]] = None,
    packs: Optional[str] = None,
    device_peaks: Optional[str] = None,
) -> None:
    """Serve until Ctrl-C (or SIGTERM), then stop the run manager. Raises ServeError when it cannot listen."""
    from werkzeug.serving import make_server, select_address_family

    app = build_app(logdir, cache_dir=cache_dir, link_roots=link_roots, device_peaks=device_peaks, packs=packs)
    # One line per request is noise here (TensorBoard does not log them either); errors still show.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    # Bound here rather than by werkzeug, which prints and exits the process when the port is taken.
    try:
        listener = socket.create_server((host, port), family=select_address_family(host, port))
    except OSError as error:
        raise ServeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    with listener:  # make_server uses a duplicate of this socket
        server = make_server(host, port, app, threaded=True, fd=listener.fileno())
    manager = app.plugin.manager  # start scanning and parsing now, before the first page load
    try:
        previous_sigterm = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    except ValueError:  # not the main thread (an embedding program): no handler then
        previous_sigterm = None
    try:
        print(f"Profscope serving {logdir} at {display_url(host, server.port)} (Ctrl-C to stop)",
              file=out, flush=True)
        if not is_loopback(host):
            print(f"warning: listening on {host}: anyone who can reach this port can read the runs of the logdir",
                  file=sys.stderr, flush=True)
        server.serve_forever()  # returns on KeyboardInterrupt, after closing the socket
    finally:
        manager.stop()
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
    print("Profscope stopped", file=out, flush=True)
