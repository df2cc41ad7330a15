"""The Chrome-trace JSON decoder every supported format goes through: a file streamed in bounded blocks
(``reader.py``), cut into chunks of whole events (``chunks.py``), decoded chunk by chunk into the model's raw
columns (``decode.py``: each event decoded into a struct, ``events.py``, then into columns, ``chunk_reader.py``, or
read by the C scanner, ``columnar.py``), with B/E pairs matched across chunks (``begin_end.py``), optionally by two processes
(``parallel.py``); the document's top-level keys checked (``metadata.py``).

How each module works:

* ``reader.py``, ``chunks.py``: A file is streamed, never held whole: plain or gzip (detected by magic, inflated with
  ISA-L's ``IgzipDecompressor``, which keeps the input it has not used yet: zlib's ``unconsumed_tail`` copied the rest
  of each read after every block) in blocks of at most 1 MB, every inflate call bounded so that inflation stops at the
  size limit itself (gzip bombs). ``chunks.EventChunks`` keeps a moving window of those blocks and cuts it into chunks
  of whole events: a guessed cut at ``}, {`` past each 1 MB (with 1 MB read beyond it; small chunks decode faster:
  their Python objects stay in the CPU's caches from decode to freeing), an exact cut by a vectorised JSON structure
  scan where a guess does not decode; the keys before and after the events array are the metadata. Memory follows the
  model, not the file.
* ``decode.py`` (with ``events.py`` and ``chunk_reader.py``): Chrome-trace JSON → raw columns, one chunk at a time: events decoded into typed structs and turned
  into numpy columns at once, so one chunk of Python objects lives at a time. Times are typed as numbers in the first
  decoder (no per-event type check); a chunk with text times (MindSpore) takes a second strict decoder, which later
  chunks then start with. A chunk's sparse argument column with no value in it (no kernel, no collective in the chunk)
  is a broadcast view of its "absent" value (``raw_columns.constant_part``), which costs no memory here, in the
  helper's files or in the merge. Values of unexpected types fall back to a lenient per-event path; a value no decoder
  takes (invalid UTF-8, a number beyond any float) to one event at a time (text repaired, an unreadable event dropped
  and located by its byte offset).
* ``columnar.py``, ``_columnar.c``: The decoder's fast path: a C scanner (an optional extension, built by the install
  when a C compiler is there) reads a chunk's JSON straight into columns — times and numeric arguments as
  float64/int64 (numbers correctly rounded: Clinger's exact case, else CPython's ``PyOS_string_to_double``), names,
  pids/tids, flow ids and raw arguments (``Input Dims``, ``Call stack``) as ids of an intern table kept across the
  trace's chunks; ``columnar.Texts`` turns each distinct text into the reader's id once. It takes only plain JSON
  (UTF-8 checked, no escape in a text it keeps, the types the msgspec structs expect, no field twice); for any other
  chunk, and for chunks holding metadata, counters or B/E events, it answers None and ``decode.py`` reads the chunk
  through msgspec. Both paths feed ``chunk_reader.ChunkReader._read_rows`` (``_ScannedFields`` / ``_StructFields``), and give
  equal raw columns, string ids included (tests/test_columnar_decoder.py: real traces, the hostile corpus, edge cases,
  random damage). 10 M events: decode 10.5 → 6.0 s. ``PROFSCOPE_COLUMNAR=0`` turns it off (for comparisons).
* ``begin_end.py``: Duration events (``B``/``E``, per thread) and nestable async events (``b``/``e``, a track per
  category and id) paired into slices after the whole document is decoded (pairs may straddle chunks): a running depth
  per thread reflected at zero, begins and ends grouped by (thread, depth). A begin left open ends at the trace's end,
  an end with nothing open is dropped; both are counted in the parse stats. The decoder only collects these events, on
  chunks that have them.
* ``parallel.py``: Chunks decoded by a forked helper process too (parser processes and CLI only): the parser hands it
  chunks through a shared ring of slots while one is free and decodes the others itself; the helper moves its chunks'
  arrays into one file per column in ``/dev/shm`` every 20 k events it decoded (the pipe as fallback, also for what is
  left once a write fails), and the parser maps them at the end; parts merged in file order, ids renumbered, then B/E
  pairs across them. A chunk the helper cannot decode starts the decode again in one process.
* ``metadata.py``: The document's top-level keys checked before the model keeps them (values of the wrong type dropped
  with a note).
* ``sniff.py``: Whether a document is a Chrome trace, from its top-level keys in order (discovery's verdict): other
  keys' values skipped unbuilt by a vectorised structure scan with its state carried across blocks, so one block is
  held whatever the value's size; at most 16 MB inflated.
"""
