"""What leaves the UI: the self-contained HTML report (``report.py``), the span scalars of TensorBoard's Scalars
dashboard (``span_scalars.py``, also run by the writer) and the ``profscope`` command line (``cli.py``).

May import every other layer and ``profscope.writer``.
"""
