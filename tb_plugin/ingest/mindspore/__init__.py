"""MindSpore's and Ascend's files: the timeline's conventions (``normalise.py``: the CPU profiler's process names;
``timeline.py``: the older Ascend/GPU device timelines; ``ascend_layers.py``: the layers of an Ascend
``trace_view.json`` or msprof timeline), the memory record read with a span (``memory_record.py``), and the side
files a view reads beside a timeline (``step_trace.py``, ``minddata.py``).
"""
