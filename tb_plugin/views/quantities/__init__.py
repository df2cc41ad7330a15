"""The quantities several pages show, defined once: time accounting (communication, computation, their overlap,
device busy time, step times) in ``accounting.py``, what each device is and is called in ``devices.py``, and
collective bandwidth (algorithm, bus, rank and transfer bandwidth) in ``collective_bandwidth.py``.

Imports only ``model``; every page module reads these rather than computing its own.
"""
