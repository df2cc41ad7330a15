"""Profscope's TensorBoard plugin, in layers; each folder may import only the ones above it in this list:

* ``layout.py``: the on-disk contract (file names, the layouts looked for); imports nothing of Profscope.
* ``model/``: the immutable trace model, its file format and what is derived from it alone (steps, the trace
  index, stored answers).
* ``ingest/``: trace files of each format → the model (may import ``model``, ``layout``).
* ``views/``: one analysis per view, pure functions from the model to JSON-able data (may import ``model``, and
  ``ingest`` for the side-file tables a view is handed).
* ``store/``: the runs of a logdir: storage, discovery, the cache of models, the parser processes (may import
  everything above).
* ``server/``: the HTTP routes under TensorBoard or standalone (may import everything above).
* ``reports/``: what leaves the UI: the HTML report, TensorBoard scalars, the command line (may import everything,
  and ``profscope.writer``).

``tests/test_architecture.py`` holds the tree to these rules and to no import cycle.
"""
