"""How much memory parsing a trace file takes, estimated before it is read.

The parser pool (``parser_pool.py``) admits parses while the sum of their estimates fits its
memory budget; ``estimate_parse_bytes`` is the one estimate it uses. It errs on the high side: a
high estimate only makes a parse wait for others to finish, a low one can run a machine out of memory.

Figures behind it: the file is streamed (``reader.iter_blocks`` → ``chunks.EventChunks``), so a parse
holds the columns being built and the model, about 250 bytes per event, or about 0.5x its JSON (a
10-million-event trace, 4.7 GB of JSON: 2.6 GB for the whole TensorBoard process tree at its peak,
``bench/bench_e2e.py``); ``BYTES_PER_JSON_BYTE`` is twice that. A document whose events do not
start near its beginning is decoded whole, up to ``chunks.WHOLE_DOCUMENT_MAX_BYTES``: that part is
counted as before streaming (a whole document peaked at about 2.3x its JSON). Trace JSON compresses
9-30x with gzip (the traces of ``tests/data``).

One long text (an event's name or argument of hundreds of MB, which only a hostile or broken writer makes) is held
by the window that holds its event and as the decoded text, then written whole to the model file once, while the
model's strings and every answer hold it cut (``model.interning.MAX_TEXT_CHARS``): about twice its size at the
peak (``bench/bench_long_texts.py``: a 200 MB name, 427 MB peak with the interpreter; before texts were cut, 4.0 GB
and 1 GB of stored answers). An event is at most ``chunks.MAX_WINDOW_BYTES`` (a longer one is refused), so a long
text costs at most ``LONG_TEXT_BYTES_PER_BYTE`` times that much, beside the model of the rest of the file.
"""

from __future__ import annotations

from typing import Optional

from .chrome.chunks import MAX_WINDOW_BYTES, WHOLE_DOCUMENT_MAX_BYTES

# What a parser process holds besides the trace (interpreter, numpy, msgspec).
BASE_BYTES = 200 << 20
# Peak memory of a streamed parse per byte of JSON, and of a document decoded whole.
BYTES_PER_JSON_BYTE = 1.0
WHOLE_BYTES_PER_JSON_BYTE = 2.5
# Peak memory per byte of the trace's longest text (see the module's doc).
LONG_TEXT_BYTES_PER_BYTE = 2.5
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
    whole = min(json_bytes, WHOLE_DOCUMENT_MAX_BYTES)  # what may have to be decoded whole (see the module's doc)
    streamed = whole * WHOLE_BYTES_PER_JSON_BYTE + (json_bytes - whole) * BYTES_PER_JSON_BYTE
    text = min(json_bytes, MAX_WINDOW_BYTES)  # the longest text the file may hold, and the model of the rest
    one_long_text = text * LONG_TEXT_BYTES_PER_BYTE + (json_bytes - text) * BYTES_PER_JSON_BYTE
    return BASE_BYTES + int(max(streamed, one_long_text))


def estimate_file_parse_bytes(file_size: int, gzipped: bool, trailer_size: Optional[int] = None) -> int:
    """``estimate_parse_bytes`` of a file: its own size, or a gzip file's inflated size."""
    return estimate_parse_bytes(gzip_inflated_size(file_size, trailer_size) if gzipped else file_size)


# A memory snapshot's parse (``ingest/snapshot``): the file mapped (1x), the columns and the model built from them
# (measured: 1.8x at 1 M entries with the C reader), the reference reader's objects of one entry at a time.
SNAPSHOT_BYTES_PER_FILE_BYTE = 3.0


def estimate_snapshot_bytes(file_bytes: int) -> int:
    """Peak memory of reading and deriving a memory snapshot pickle of ``file_bytes`` bytes."""
    return BASE_BYTES + int(file_bytes * SNAPSHOT_BYTES_PER_FILE_BYTE)
