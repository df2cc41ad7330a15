"""The runs of a logdir: file access (``storage.py``: local folders and remote stores), what is a span
(``discovery.py``), the cache of parsed models (``cache.py``), the parser processes (``parser_pool.py``) and their
jobs (``parse_jobs.py``), the run manager that ties them together (``runs.py``: ``RunManager.span`` resolves a
request's span in one call, ``spans.py``), and the first answers derived after a parse (``precomputed.py``).

May import ``model``, ``ingest``, ``views`` and ``layout``.

How each module works:

* ``storage.py``: The filesystem seam: local folders through ``os`` (symlinks followed once), ``s3://``, ``gs://``,
  ``az://``, ``hdfs://`` through fsspec (listing with sizes, mtimes and ETags; files reopened by URL in the parser
  processes); ``read_head`` reads a file's first bytes for discovery (a local one only when it is a regular file: a
  FIFO is never waited on).
* ``discovery.py``: Finds every layout of ``layout.py`` at any depth (symlinks followed once) by its names; any other
  ``.json``/``.json.gz`` is a span when its top level is a Chrome trace's (``ingest/chrome/sniff.py``: top-level keys
  read in order, other keys' values skipped by a vectorised scan a block at a time, never built, until a trace's key,
  at most 16 MB inflated: a harness's metadata written before the events is found; one first read of 64 KB, further
  ranges only where it does not tell; beyond the bound the file is counted as skipped with that reason), a verdict
  kept by (path, size, mtime, tag) with the writer's manifests, so a rescan of an unchanged logdir reads no file;
  counts the files that are no span by reason (event files, JSON that is no trace, empty, unreadable, profiler side
  files, other types) for the runs route; attaches companion files (a MindSpore span's memory record); an msprof
  report beside its span's ``trace_view.json`` is not a second span; two files naming one span stay two (``(2)``); a
  file counts when complete (writer manifest present, or size/mtime settled).
* ``cache.py``: Where models live: one file per model (``model/array_file.py``); a damaged entry is parsed again (the
  route answers 202 meanwhile, never 500); keyed by (user, URL or path with the endpoint, size, mtime, ETag, format
  version); atomic writes; falls back to a temp folder, never writes the logdir; bounded (LRU by the model file's
  mtime, touched on load; ``evict()`` after parses, never an entry a live span holds; an unfinished file, named after
  its writer's host and pid, is removed once that process is gone, else after 24 h).
* ``runs.py``, ``spans.py``, ``parser_pool.py``: Refresh thread + a spawn-based pool of parser processes (≤ cores, ≤
  4) that write models to the cache (a worker is spawned without running the server's main script again: under
  TensorBoard that import alone cost 0.39 s of every worker's start); per-span status/progress/error; ``span()``
  resolves a request's (run, worker, span) in one call and returns a ``Span`` (names, discovered file, manifest and
  batch size, model) or raises the 404/422/202 exceptions of ``spans.py``. ``parser_pool.py``: the parser processes
  (own processes, ``waitpid``-watched, a memory budget, a deadline); while a parse job runs, glibc takes every block
  from the heap and keeps freed ones (``reused_heap``): numpy's column-sized temporaries reuse pages instead of
  faulting fresh ones in (10 M events: derivations 4.18 → 3.76 s). Request threads only read snapshots.
* ``precomputed.py``: What the pages ask first (default answers of the heavy routes, the trace viewer's tracks, the
  trace index), derived in the parser process from the written model before it is moved into place in the cache: a
  model found in the cache always has them, and no first request analyses a large trace. Stored with
  ``model/stored_answers.py``. A forked child builds the trace index, flame graph, kernel tables, memory, critical
  path and tracks while the parser process derives the operator tables, then the overview (in that order: 1.1 s
  instead of 1.9 s for the tables at 10 M events; two cores: about 40% less derivation time; a child that fails or
  cannot fork costs time, never an answer; the parser gives its heap's free pages back first, so that the child does
  not copy them).
* ``snapshots.py``: Memory snapshots' parse jobs (in the parser pool, like traces): the file memory-mapped and read
  as plain data, the model derived and written to the cache as ``<key>.snapshot`` with its first answers stored beside
  it before it is moved into place; the heap's free pages are given back after the read and after the build (peak
  2.7x the file at 1 M entries). ``RunManager`` keeps a run's snapshots by name beside its spans (``snapshot()``
  resolves run, worker, span and name as ``span()`` does); discovery finds them by content
  (``layout.starts_like_memory_snapshot``: the opcodes before a pickled dict's first key), owned by the run, the rank a
  name or folder names, and the span whose trace has the same name.
* ``packs.py``, ``pack_summary.py``, ``ingest.py``: Packs: a trace's cache entry (model, ``views.json``, trace index)
  and its rank's summary as Parquet (``pack_summary.py``, pyarrow), kept beside the trace in
  ``.profscope/<file>/<key>/`` (or under ``--packs``), with a manifest written last (key = name, size, mtime, ETag,
  pack and model formats; size and CRC-32 of every file; the span's listing and the views version): visible
  atomically on object stores too; older keys' folders removed after the manifest. The run manager adopts a current
  pack before parsing (``runs._adopt_packs``, outside its lock): a local one is listed from its manifest and its
  model memory-mapped read-only on first use (``TraceModel.writable`` False: nothing written beside it, nothing
  removed), a remote one (or one of other views) read at once, a remote one copied into the cache as the trace's
  entry, each file checked; a pack that does not read is never tried again for that file. ``ingest.py``:
  ``profscope ingest``, one task per file, on the parser pool or on Dask (``dask.distributed``; a LocalCluster on
  127.0.0.1 by default; the memory estimate as the worker resource ``MEMORY``; nothing forks on a Dask worker, whose
  process runs threads); a file that fails with an error of Profscope's own is tried once more; then a reduce step
  writes each folder's summary (``.profscope/.ranks/``: every pack's steps and collectives in one pair of Parquet
  files), which the run-level routes read in one go.
"""
