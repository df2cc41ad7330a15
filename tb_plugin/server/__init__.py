"""The HTTP side: the TensorBoard plugin and its routes (``plugin.py``, thin: parameters → a span from the store →
a view), its loader and flags (``loader.py``), the standalone server (``serve.py``), JSON/CSV/download responses and
the one place errors become status codes (``http.py``, ``table_route.py``).

May import ``store``, ``views``, ``ingest``, ``model`` and ``layout``; nothing imports it but ``reports``.

How each module works:

* ``http.py``, ``table_route.py``: JSON/download responses and the one place that maps exceptions to status codes.
* ``plugin.py``, ``loader.py``: The TensorBoard plugin and its flags; each route: parameters → one ``Span`` from the
  store → a question of ``views/answers.py`` (a few lines each). Static files are served from a listed set only.
* ``serve.py``: The plugin's routes and a standalone page under werkzeug, without TensorBoard.
* ``provider_runs.py``: is_active from TensorBoard's data provider (span records in event files).
"""
