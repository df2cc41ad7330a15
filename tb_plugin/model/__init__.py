"""The trace model: immutable columns, how they are built from decoded events, their file format, and what is
derived from the model alone (steps, the trace viewer's index, answers stored beside a cached model).

Imports nothing of Profscope outside ``model/``.

How each module works:

* ``trace_model.py``: The immutable model: slices (sorted by track, start), instants (incl. ``[memory]``), counters,
  flows, links, steps, tracks, metadata. Integer ns times, interned strings, no Python object per event.
* ``raw_columns.py``, ``interning.py``: What every decoder hands to ``model.build``: one trace's columns in file order
  (per-chunk parts, metadata events, string ids as interned, per-chunk bookkeeping for the two-process merge), and the
  dict-based string interning they use (``map(table.__getitem__, …)``, C speed). A text longer than 64 K characters
  (only hostile or broken writers make one) is cut among the model's strings, so in every answer, and kept whole in
  the model's file (``TraceModel.full_text``, ``trace/event?full_text=1``): a 200 MB name cost 1 GB of stored answers
  and a 4 GB parse, now 0.5 MB and 0.43 GB.
* ``build.py``, ``factorize.py``: Tracks from (pid, tid) with metadata names, sorting, nesting, flow binding, links
  (device activity → runtime call by correlation, or by a runtime → device flow where there is none (DeepLink, Ascend)
  → operator by External id where that operator encloses the call in time, else the innermost operator enclosing the
  call: writers that reuse numbers as External ids cannot credit work to unrelated operators), ``ProfilerStep#N`` host
  steps. Keys are factorised with presence tables and slices ordered by one composite sort: no whole-column
  ``np.unique``/``lexsort``. ``factorize.unique_rows`` groups rows of one or two integer keys (operator, kernel and
  stack groupings) the same way, instead of ``np.unique(axis=0)``. The build touches as little fresh memory as it can
  (a first touch is what a large build pays most for): each column is concatenated into one reused scratch buffer and
  gathered into its final array, a column holding one value throughout becomes a broadcast view, and in the parser the
  final arrays are laid out in the model's cache file (``allocate``, see ``model/array_file.py``), so the model is
  never copied from memory to the file. From a million slices the column gathers run in a thread beside the nesting
  (numpy releases the GIL in both; the thread is joined before the build returns, so the parser may still fork).
* ``nesting.py``: Depth/parent per slice with sorted-array arithmetic; tracks where a range overruns its parent use
  torch's own stack rule.
* ``tree.py``: Self time, subtree sums, ancestor flags, frame chains (call stacks as integers), vectorised per nesting
  level.
* ``intervals.py``: Interval unions and exclusive priority breakdowns over elementary segments. Shared by every view.
  Coverage by sorted disjoint intervals (merged ones, steps) is a running sum of 8-bit open/close marks; other
  interval sets are counted with ``bincount``.
* ``categories.py``: The category names of the formats (device, sync, operator categories; MindSpore's process names)
  and what each slice is (kernel, memcpy, device sync, runtime, operator, collective, allocator, Tensor Core kernel,
  …), and the kernel table's row of a kernel name (an Ascend operator instance ``Conv2D-op292`` is its type
  ``Conv2D``). DeepLink's device records by name (DIOPI calls are kernels; ``dipu_*`` wrappers and tensor allocations
  are not); MTIA's device activity by name (work on its processing elements is kernels, ``dma_request`` copies, event
  records and waits sync); in a generic trace every host range is an operator and every range on a device lane a
  kernel, by name. ``SliceKinds(model)`` is one instance per model (kept in its memo): each mask is computed once,
  whichever view asks first.
* ``float32.py``: Values the model keeps as float32 (blocks per SM, occupancy) given back as the trace wrote them (the
  shortest decimal that reads back as the float32: 2.8, not 2.799999952316284).
* ``steps.py``: Steps extended to the device work they launched; trailing incomplete steps dropped (on CPU-only spans
  by their host operators: a stub step cut by the profiler's stop).
* ``array_file.py``: The file format of a model and of what is derived from it: aligned arrays followed by a JSON
  header (format 11: the header last, so that ``ArrayFileWriter.allocate`` can lay out and map a column before the
  model is complete; space is reserved with ``posix_fallocate`` first, so a full disk is an error, never a SIGBUS; a
  thread of the writer faults the mapped pages in with ``MADV_POPULATE_WRITE`` on the other core while the build fills
  them, and ends before the file is finished: 10 M events, build 3.48 → 2.70 s), memory-mapped on load; a CRC-32
  (ISA-L) of the header, checked on open, and of every array, checked when a view first reads it
  (``model/trace_model.py``): a mismatch removes the entry, so that the span is parsed again. A model's column that
  holds one value throughout (the collective columns of a trace without collectives, the Python ids of one without
  Python frames) is stored as that value in the header and read back as a read-only broadcast view (format 10; the 10
  M benchmark model: 1153 → 839 MB). The trace index uses the same format.
* ``trace_index.py``: Level-of-detail index per (track, depth), and its window queries (``views/trace/queries.py``
  answers the trace viewer with them). The index is derived in the parser process and stored compactly beside the
  model (32-bit lanes, counts and rows, also while the levels are made; a level kept only where it holds at most 3/4
  of the items of the finer kept level: 10 M events, 425 → 187 MB, CRC-32 per array, each level read and checked on
  first use); a damaged one is built again.
* ``stored_answers.py``: Answers of views kept beside a cached model: ``answer(model, key, compute)`` returns the
  stored one when the parser left it, else computes and memoises. JSON behind ``VIEWS_VERSION`` and a CRC-32 (another
  version's answers, or damaged ones, are computed afresh).
* ``snapshot.py``: A PyTorch allocator memory snapshot as columns (``SnapshotModel``): trace entries with the device's
  active, allocated and reserved bytes after each, frames and stacks, allocations' lives, the snapshot's segments and
  blocks, ``record_function`` annotations, the timeline bands of the largest sites; its cache file (the array-file
  format, ``kind: memory_snapshot``, each array checked on first use). No Python object per entry.
"""
