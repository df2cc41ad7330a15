"""The Trace page: the viewer's queries (tracks, slices at a resolution, counters, one event, search:
``queries.py``), what lies in a selected time range (``range_summary.py``) and the critical path of a step that the
viewer draws over the slices (``critical_path.py``), and the span's memory snapshot as counter tracks beside the trace's
own (``snapshot_counters.py``).
"""
