"""What leaves the UI: the terminal summary (``summary.py``) and the self-contained HTML report (``report_html.py``)
of what ``report.py`` collects, the span scalars of TensorBoard's Scalars dashboard (``span_scalars.py``, also run by
the writer), the ``profscope`` command line (``cli.py``) and the Python API of ``from profscope import open_trace``
(``notebook.py``).

May import every other layer and ``profscope.writer``.
"""
