"""Trace files → the model: ``load.py`` is the entry point (``load_trace``), ``detect.py`` decides the format in one
place, ``chrome/`` decodes the Chrome-trace JSON every format is written in, and a module or folder per
framework applies its conventions (``paddle.py``, ``mindspore/``; PyTorch's Kineto conventions are the model's own,
DeepLink's and MTIA's are named in ``model/categories.py``).

May import ``model`` and ``layout``.

How each module works:

* ``load.py``: The entry point: ``load_trace`` / ``load_trace_stream`` guess the framework (``detect.py``), decode
  (``chrome/``), decide the framework from the whole document, apply the framework's conventions and build the model;
  a MindSpore span's memory record is read with it.
* ``detect.py``, ``paddle.py``: Which framework wrote a trace (Paddle, DeepLink, PyTorch, MindSpore, else generic), by
  content wherever it lies: a first guess from the name and the first bytes (it chooses Paddle's decoding), then the
  decision from the whole decoded document — top-level keys anywhere, the categories of all events, the distinct event
  names, thread ids and process/thread names (a presence table over string ids: ~1 ms per 100 MB). ``profscope
  import`` decides the same way. Paddle's normalisation on the decoded columns (name suffixes, sub-µs starts,
  categories, memory arguments).
* ``footprint.py``: The memory a parse of a file may take, estimated before it starts (the parser pool's memory
  budget).
"""
