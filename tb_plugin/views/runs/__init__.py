"""The runs and what names a span: the run table (``table.py``), the facts that tell spans apart in the pickers
(``span_names.py``), and the span summary of the ``summary`` route (``summary.py``).
"""
