"""The runs of a logdir: file access (``storage.py``: local folders and remote stores), what is a span
(``discovery.py``), the cache of parsed models (``cache.py``), the parser processes (``parser_pool.py``) and their
jobs (``parse_jobs.py``), the run manager that ties them together (``runs.py``: ``RunManager.span`` resolves a
request's span in one call, ``spans.py``), and the first answers derived after a parse (``precomputed.py``).

May import ``model``, ``ingest``, ``views`` and ``layout``.
"""
