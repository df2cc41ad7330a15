"""Shared definitions of the quantities several views show, each computed in one place: FLOPs and bytes per
operator call, device peaks, the roofline, collective bandwidth.

May import what ``views`` may import (``model``, ``ingest``).
"""
