"""PyTorch allocator memory snapshots (``torch.cuda.memory._dump_snapshot``) → columns.

A snapshot is a Python pickle, and a logdir is shared: it is never given to ``pickle.load``. ``reader.py`` reads it
with a plain-data pickle machine that builds dicts, lists, tuples, strings, bytes, numbers, booleans and None only and
refuses every other opcode (globals, classes, reductions, persistent ids, extensions), with limits, so a hostile file
fails with a clear error and runs nothing. While it reads, the trace entries of ``device_traces`` (and the
``external_annotations``) are turned into columns one by one and dropped (``columns.py``): memory follows the
columns, not the file. ``_snapshot_reader.c`` is the same machine in C (an optional extension built by the install);
``reader.py`` is its reference and the fallback.

May import ``model`` and ``layout``.
"""
