"""How much memory parsing a trace file takes, estimated before it is read.

The parser pool (``parser_pool.py``) admits parses while the sum of their estimates fits its
memory budget; ``estimate_parse_bytes`` is the one estimate it uses. It errs on the high side: a
high estimate only makes a parse wait for others to finish, a low one can run a machine out of memory.

Figures behind it: a parse holds the inflated JSON (or maps a plain file) and builds columns and a
model beside it; a 10-million-event trace (4.7 GB of JSON) peaked at 10.9 GB in one parser process,
about 2.3x its JSON. Trace JSON compresses 9-30x with gzip (the traces of ``tests/data``).
"""

from __future__ import annotations

from typing import Optional

# What a parser process holds besides the trace (interpreter, numpy, msgspec).
BASE_BYTES = 200 << 20
# Peak memory of a parse per byte of JSON.
BYTES_PER_JSON_BYTE = 2.5
# Inflated size per gzip byte assumed when the gzip trailer cannot be read.
ASSUMED_GZIP_RATIO = 20
# The gzip trailer holds the inflated size modulo 4 GiB; a wrap is counted while the ratio it gives
# stays below MIN_GZIP_RATIO and a wrap is possible at all (at most MAX_GZIP_RATIO).
_GZIP_SIZE_MODULUS = 1 << 32
MIN_GZIP_RATIO = 4
MAX_GZIP_RATIO = 64


def gzip_inflated_size(file_size: int, trailer_size: Optional[int]) -> int:
    """The inflated size of a gzip file of ``file_size`` bytes whose trailer says ``trailer_size`` (mod 4 GiB)."""
    if trailer_size is None:
        return file_size * ASSUMED_GZIP_RATIO
    inflated = trailer_size
    while inflated < file_size * MIN_GZIP_RATIO and inflated + _GZIP_SIZE_MODULUS <= file_size * MAX_GZIP_RATIO:
        inflated += _GZIP_SIZE_MODULUS
    return inflated


def estimate_parse_bytes(json_bytes: int) -> int:
    """Peak memory of parsing a trace of ``json_bytes`` bytes of (inflated) JSON, in bytes."""
    return BASE_BYTES + int(json_bytes * BYTES_PER_JSON_BYTE)


def estimate_file_parse_bytes(file_size: int, gzipped: bool, trailer_size: Optional[int] = None) -> int:
    """``estimate_parse_bytes`` of a file: its own size, or a gzip file's inflated size."""
    return estimate_parse_bytes(gzip_inflated_size(file_size, trailer_size) if gzipped else file_size)
