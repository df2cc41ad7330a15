"""The quantities several pages show, defined once: time accounting (communication, computation, their overlap,
device busy time, step times) in ``accounting.py``, what each device is and is called in ``devices.py``,
collective bandwidth (algorithm, bus, rank and transfer bandwidth) in ``collective_bandwidth.py``, the FLOPs and
bytes of each operator call (``work_formulas.py``, applied to a model and counted once in ``operator_work.py``), the
devices' peaks (``device_peaks.py``), and from them the roofline, MFU and efficiency columns (``efficiency.py``) and
the bandwidth of copies (``copies.py``), and how to record what a span lacks in its own profiler's words
(``recording.py``).

Imports only ``model``; every page module reads these rather than computing its own.
"""
