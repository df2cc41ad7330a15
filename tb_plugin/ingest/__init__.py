"""Trace files → the model: ``load.py`` is the entry point (``load_trace``), ``detect.py`` decides the format in one
place, ``chrome/`` decodes the Chrome-trace JSON every format is written in, and a module or folder per
framework applies its conventions (``paddle.py``, ``mindspore/``; PyTorch's Kineto conventions are the model's own,
DeepLink's and MTIA's are named in ``model/categories.py``).

May import ``model`` and ``layout``.
"""
