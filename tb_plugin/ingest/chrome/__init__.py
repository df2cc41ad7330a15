"""The Chrome-trace JSON decoder every supported format goes through: a file streamed in bounded blocks
(``reader.py``), cut into chunks of whole events (``chunks.py``), decoded chunk by chunk into the model's raw
columns (``decode.py``: each event decoded into a struct, ``events.py``, then into columns, ``chunk_reader.py``, or
read by the C scanner, ``columnar.py``), with B/E pairs matched across chunks (``begin_end.py``), optionally by two processes
(``parallel.py``); the document's top-level keys checked (``metadata.py``).
"""
