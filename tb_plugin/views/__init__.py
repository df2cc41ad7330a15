"""One module per view's analysis, in folders named after the pages (``analyses/``, ``trace/``, ``distributed/``,
``runs/``; a page of one module is that module): pure functions from the model to JSON-able data, shared definitions
of the quantities several views show (``quantities/``: ``accounting.py``, ``devices.py``), the one JSON encoder of
their answers (``encoding.py``) and the CSV of the tables the pages show (``table_csv.py``). ``answers.py`` is the
one door: one function per question, owning its cache key; the routes and every other caller ask their questions
there.

May import ``model``, and ``ingest`` for the side-file tables a view is handed (MindSpore's step trace).

How each module works:

* ``answers.py``: The questions, one function each, owning their cache keys (stored by the parser, memoised, or
  computed); its docstring says how to add one.
* ``quantities/accounting.py``: One definition of each time quantity several views show: communication (collective
  kernels, and host collectives that launch none, such as Gloo's), computation (device work other than collectives;
  host work on host-only spans), their overlap, device busy/idle time, per step. The overview, Distributed view, step
  trace, run table, report, ``summary`` and the Scalars all read them from here; ``tests/test_real_traces.py`` holds
  every view to it on every real trace, ``tests/test_hta_agreement.py`` checks it against HTA.
* ``overview.py``: Step breakdown by priority, device summary (utilization, SM efficiency, occupancy and Tensor Core
  share over the same steps; a figure the trace cannot support is null with its reason), benchmark figures,
  recommendations.
* ``quantities/devices.py``: What each device is called and is: its name from ``deviceProperties`` (one listed device
  and one device with work are the same device, whatever their ids: a process that saw one device lists it as 0 while
  its lanes carry the machine's index), its kind from the vendor's lane labels ("GPU" only for GPUs; "Ascend",
  "MTIA"…), its maker (NVIDIA/AMD, for Tensor Core figures), the device of a ``[memory]`` event (c10 device types:
  CUDA and HIP are GPUs) with its capacity. Shared by the overview, kernels, memory and trace views.
* ``operators.py``, ``kernels.py``: Operator and kernel tables (by name, shape, stack, operator).
* ``stacks.py``, ``modules.py``: Flame graph (aggregated call tree), folded stacks, ``nn.Module`` tree.
* ``trace/queries.py``: The trace viewer's queries: tracks (stored answer), slices per window through the trace index,
  counters, one event with its flows and links, search.
* ``runs/summary.py``: What a span contains (counts, tracks, steps, parse notes), its framework, and what could not be
  derived from it (``limitations``: no steps, no device activity, unpaired B/E, unknown categories, …), shown beside
  the run's framework in the UI.
* ``memory.py``, ``distributed/ranks.py``: Memory curves, allocations and bytes per operator; per-rank
  compute/communication/overlap, waits, collectives, straggler.
* ``distributed/rank_steps.py``: Ranks side by side: the rank × step matrix (step time, communication, exposed
  communication per step, from ``accounting.step_times``; steps matched across ranks by name; a row's mean is the
  Distributed view's per-rank figure) and the shift that puts one step of every worker on one time axis (by the step's
  start, or by each trace's clock made absolute with ``baseTimeNanoseconds``, in integer ns). Routes
  ``distributed/matrix`` (CSV: one line per rank and step) and ``trace/ranks``; the stacked trace reuses every
  worker's own ``trace/tracks`` and ``trace/slices``.
* ``data_pipeline.py``: Is the job waiting for data (see "Data pipeline" below) (MindSpore's MindData files from
  ``ingest/mindspore/minddata.py``).
* ``step_trace.py``: Each step split into iteration gap, forward, backward, optimizer, communication and tail (see
  "Step trace" below) (MindSpore's step trace table from ``ingest/mindspore/step_trace.py``).
* ``trace/critical_path.py``: The critical path of a step (see "Critical path" below).
* ``compare.py``, ``runs/table.py``: Two spans side by side (breakdown, operators, kernels; per step and, with both
  batch sizes known from the manifests or entered in the page, per sample); every run of the logdir in one table.
* ``table_csv.py``: CSV of the tables the page shows: each table route's answer with the page's sort and filter (the
  page's rules, written once in each language: ``text_sort_key`` / ``textSortKey``), formula-safe cells;
  ``server/table_route.table_route`` serves ``format=csv`` beside the JSON with the same error answers. ``summary
  --csv`` uses the same tables.
* ``trace/range_summary.py``: The trace viewer's area selection (``trace/range``): slices by track kind and name with
  time and self time inside the range, the steps inside it with the overview's breakdown, the range's own breakdown.
* ``runs/span_names.py``: What tells spans apart for people (start time of day, steps, length), listed in the ``runs``
  answer from the model or the manifest.
* ``analyses/stream_work.py``, ``analyses/idle.py``, ``analyses/launches.py``, ``analyses/queues.py``,
  ``analyses/sequences.py``, ``analyses/annotations.py``: The Analyses page (``analyses/*`` routes), over the
  overview's steps: device work per stream (lane) with its launching runtime call, clipped to the steps
  (``stream_work``, shared); idle gaps per stream split by cause as HTA splits them (host wait / kernel wait / other,
  plus the time before the first and after the last work); per launch the CPU duration, launch delay and device time
  (a ``cudaGraphLaunch`` one launch of many kernels), histograms, short launches; queue length per stream as a step
  function (+1 at the launch call, −1 at the work's start), summarised over the steps and served as the trace viewer's
  ``c:queue:<track>`` counter tracks; repeated (operator, kernel sequence) groups found by polynomial hashes on whole
  arrays; ``user_annotation`` ranges and their ``gpu_user_annotation`` copies by name. ``tests/test_hta_analyses.py``
  holds them to HTA 0.5.0 on the real GPU traces.
* ``encoding.py``: The one JSON encoder of answers (numpy scalars and arrays, NaN as null): routes, stored answers and
  the command line.
* ``memory_snapshot.py``: The Memory snapshot page's answers from a ``SnapshotModel``: the overview (peaks, totals at
  start and end against those the segments state, OOM events with what was asked and free, allocator settings), the
  timeline at a resolution (per pixel the highest and lowest active bytes and the largest sites' bands at the highest
  instant: a peak is never lost), what is alive after an entry grouped by site, stack, category, annotation, user
  metadata, compile context or stream with a flame graph of live bytes, one allocation's life and stack, the
  allocator's segments and fragmentation at a moment (exact at the end, rebuilt from the history before), two
  snapshots compared by site. ``answers.py`` holds their keys (``snapshot_*``).
"""
