"""The Distributed page: per rank computation, communication and their overlap, collectives and stragglers
(``ranks.py``), and the rank × step matrix and the shifts that put the ranks side by side (``rank_steps.py``,
also behind the Trace page's ranks view). Both are computed from each rank's summary (``rank_summary.py``: steps
with the accounting breakdown, collective calls with process group, sequence number, sizes, times and stream, the
operator and kernel tables, as columns), made from the rank's model or read from its pack's Parquet files: the same
answer either way, and a job of a thousand ranks is answered without opening a thousand models. ``cross_rank.py``:
collectives matched across ranks by (process group, sequence number) — one [ranks, collectives] matrix reduced
along the ranks when every rank ran the same collectives in the same order, else per collective with ``ufunc.at``
— their latency (the shortest duration), start skew, the last rank to arrive and the wait it caused, bandwidths per
collective kind (``quantities/collective_bandwidth.py``'s transfer bandwidth), and a straggler table.
"""
