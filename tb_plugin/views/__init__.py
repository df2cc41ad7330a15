"""One module per view's analysis: pure functions from the model to JSON-able data, shared definitions of the
quantities several views show (``accounting.py``, ``devices.py``), and the one JSON encoder of their answers
(``encoding.py``).

May import ``model``, and ``ingest`` for the side-file tables a view is handed (MindSpore's step trace).
"""
