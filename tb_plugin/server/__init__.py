"""The HTTP side: the TensorBoard plugin and its routes (``plugin.py``, thin: parameters → a span from the store →
a view), its loader and flags (``loader.py``), the standalone server (``serve.py``), JSON/CSV/download responses and
the one place errors become status codes (``http.py``, ``table_route.py``).

May import ``store``, ``views``, ``ingest``, ``model`` and ``layout``; nothing imports it but ``reports``.
"""
