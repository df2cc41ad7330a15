"""The Analyses page, one module per ``analyses/*`` route, over the overview's steps: idle time per stream
(``idle.py``), kernel launches (``launches.py``), queue length (``queues.py``), frequent kernel sequences
(``sequences.py``), the user's annotations (``annotations.py``); ``stream_work.py`` is the device work per stream
with its launching calls that the first three share.
"""
