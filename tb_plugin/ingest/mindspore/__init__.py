"""MindSpore's and Ascend's files: the timeline's conventions (``normalise.py``: the CPU profiler's process names;
``timeline.py``: the older Ascend/GPU device timelines; ``ascend_layers.py``: the layers of an Ascend
``trace_view.json`` or msprof timeline), the memory record read with a span (``memory_record.py``), and the side
files a view reads beside a timeline (``step_trace.py``, ``minddata.py``).

How each module works:

* ``normalise.py``, ``timeline.py``, ``memory_record.py``: MindSpore on the decoded columns: the CPU profiler's
  process names as categories; the older Ascend/GPU device timelines' fixed process ids as roles (device tasks →
  kernels, zero-length operator records of Ascend tasks, steps derived as MindSpore derives them); the memory record
  (``cpu_ms_memory_record_<id>.txt``) as ``[memory]`` totals. Discovery attaches the record to its span as a companion
  file (part of the cache key); the parser reads it with the trace.
* ``ascend_layers.py``: The layers of an Ascend timeline (MindSpore 2.x ``trace_view.json`` on Ascend, msprof's
  ``msprof_<ts>.json``, found in ``mindstudio_profiler_output/`` or ``ASCEND_PROFILER_OUTPUT/``): ``Ascend Hardware``
  tasks are kernels of the device (communication tasks by name are collectives; tasks msprof names after their task
  type are copies (``MEMCPY_ASYNC``) or device sync (``NOTIFY_WAIT``, ``EVENT_RECORD``…); a collective's own tasks,
  matched to its HCCL plane tasks, count through its operator), ``CANN`` calls runtime (linked to their tasks by the
  ``HostToDevice`` flows), ``HCCL`` operators communication (counted once), ``Overlap Analysis`` rows no time; the
  documentation followed is listed in its docstring.
* ``minddata.py``, ``step_trace.py``: MindSpore's side files a view reads beside a timeline: the MindData pipeline
  files and the step trace table (see "Data pipeline" and "Step trace" below), read through the store's file access by
  their known names only.
"""
