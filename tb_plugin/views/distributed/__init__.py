"""The Distributed page: per rank computation, communication and their overlap, collectives and stragglers
(``ranks.py``), and the rank × step matrix and the shifts that put the ranks side by side (``rank_steps.py``,
also behind the Trace page's ranks view).
"""
