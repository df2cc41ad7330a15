"""What leaves the UI: the terminal summary (``summary.py``) and the self-contained HTML report (``report_html.py``)
of what ``report.py`` collects, the span scalars of TensorBoard's Scalars dashboard (``span_scalars.py``, also run by
the writer), the ``profscope`` command line (``cli.py``) and the Python API of ``from profscope import open_trace``
(``notebook.py``).

May import every other layer and ``profscope.writer``.

How each module works:

* ``report.py``: What a report shows about a span (``collect_span``: the answers of ``views/answers.py``), the
  number formats, the rows and cells both renderers show.
* ``summary.py``: ``profscope summary``: column-aligned text, ``--json``, ``--csv TABLE``.
* ``report_html.py``: The self-contained HTML report (inline SVG, escaped strings, no script).
* ``notebook.py``: ``open_trace(path)``: a ``Trace`` whose methods are the questions of ``views/answers.py``.
* ``span_scalars.py``: Per-span performance scalars for TensorBoard's Scalars dashboard (also computed by the writer,
  in child processes).
* ``cli.py``: ``profscope import | demo | stacks | summary | report | serve``; ``summary --json`` / ``--csv TABLE``
  for scripts.
"""
