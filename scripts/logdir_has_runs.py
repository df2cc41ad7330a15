"""Exit 0 when a logdir already holds at least one Profscope run, 1 otherwise.

`make demo` uses it to skip profiling again when the demo logdir is already filled.
A run is recognised by the same file-name rules the plugin uses (``layout.py``), so
temporary files left by an interrupted writer do not count.
"""

from __future__ import annotations

import os
import sys

from profscope.tb_plugin import layout


def holds_a_trace(logdir: str) -> bool:
    for _folder, _subfolders, files in os.walk(logdir):
        for name in files:
            if layout.parse_torch_trace_name(name) or layout.parse_writer_trace_name(name):
                return True
    return False


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} LOGDIR", file=sys.stderr)
        return 2
    return 0 if os.path.isdir(argv[1]) and holds_a_trace(argv[1]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
