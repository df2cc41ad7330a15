"""One module per view's analysis, in folders named after the pages (``analyses/``, ``trace/``, ``distributed/``,
``runs/``; a page of one module is that module): pure functions from the model to JSON-able data, shared definitions
of the quantities several views show (``quantities/``: ``accounting.py``, ``devices.py``), the one JSON encoder of
their answers (``encoding.py``) and the CSV of the tables the pages show (``table_csv.py``).

May import ``model``, and ``ingest`` for the side-file tables a view is handed (MindSpore's step trace).
"""
