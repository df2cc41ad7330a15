"""The ``profscope`` command line.

One small function per subcommand: ``_add_<name>_parser`` declares its arguments and
``_run_<name>`` does the work and returns the exit status. This module imports
neither torch nor TensorBoard; each subcommand imports what it needs when it runs.

Exit status: 0 on success, 1 when the command fails (the reason is printed on
stderr), 2 for a usage error (argparse).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from typing import Callable, Optional, Sequence, Union

_INT = re.compile(r"^[+-]?\d+$")


class CommandError(Exception):
    """A failure to report in one line, without a traceback."""


def _tag(text: str) -> tuple[str, Union[str, int, float]]:
    """``KEY=VALUE``; VALUE becomes an int or a finite float when it reads as one."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    if _INT.match(raw):
        return key, int(raw)
    try:
        number = float(raw)
    except ValueError:
        return key, raw
    return key, number if math.isfinite(number) else raw


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


# --- import -------------------------------------------------------------------------


def _add_import_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import",
        help="bring existing trace files into a logdir",
        description=(
            "Copy Chrome-trace files (.json or .json.gz, e.g. torch's <worker>.<ts>.pt.trace.json.gz) "
            "into <logdir>/<run>/plugins/profscope/ as writer spans (gzip + manifest, written atomically), "
            "and record them with their performance scalars in a TensorBoard event file of the run folder. "
            "Every file is checked before any is written."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="trace files to import")
    parser.add_argument("--logdir", required=True, help="the TensorBoard logdir")
    parser.add_argument("--run", required=True, help="run folder under the logdir (may be nested: group/exp1)")
    parser.add_argument(
        "--worker", help="worker name (default: from a torch trace file name, else the file name without .json[.gz])"
    )
    parser.add_argument("--framework", default="pytorch", help="framework that wrote the traces, [a-z0-9_]+")
    parser.add_argument("--batch-size", type=_positive_int, help="samples per step, recorded in the manifest")
    parser.add_argument(
        "--tag", action="append", type=_tag, default=[], metavar="KEY=VALUE", help="a tag for the manifest (repeatable)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace spans that already exist")
    parser.add_argument(
        "--no-event-file", dest="event_file", action="store_false",
        help="do not write the TensorBoard event file (span records and performance scalars)",
    )
    parser.set_defaults(handler=_run_import)


def _run_import(args: argparse.Namespace) -> int:
    from profscope.writer.importer import import_trace_files

    try:
        written = import_trace_files(
            args.files,
            logdir=args.logdir,
            run=args.run,
            worker=args.worker,
            framework=args.framework,
            batch_size=args.batch_size,
            tags=dict(args.tag),
            overwrite=args.overwrite,
            event_file=args.event_file,
            report=lambda message: print(f"profscope import: warning: {message}", file=sys.stderr),
        )
    except (ValueError, TypeError, OSError) as error:
        raise CommandError(str(error)) from None
    for span in written:
        print(f"{span.manifest.source_file} -> {span.trace_path}")
    events = " and recorded them in a TensorBoard event file" if args.event_file else ""
    print(f"imported {len(written)} file(s) into run {args.run!r}{events}")
    return 0


# --- demo ---------------------------------------------------------------------------


def _add_demo_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="profile a small model into a logdir (needs torch)",
        description=(
            "Profile a small CNN and MLP training loop on synthetic data (no download) into "
            "<logdir>/demo/: two runs written by Profscope's writer (batch sizes 32 and 64) and one by "
            "torch's tensorboard_trace_handler."
        ),
    )
    parser.add_argument("--logdir", required=True, help="the TensorBoard logdir to write into")
    parser.add_argument(
        "--steps", type=_positive_int, default=3, help="profiled steps per span (2 spans per run; default 3)"
    )
    parser.set_defaults(handler=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from profscope.writer.demo import DemoError, run_demo

    try:
        run_demo(args.logdir, active_steps=args.steps)
    except (DemoError, OSError) as error:
        raise CommandError(str(error)) from None
    return 0


# --- stacks -------------------------------------------------------------------------


def _add_stacks_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "stacks",
        help="export a trace's call stacks as folded-stacks text",
        description=(
            "Write the aggregated call stacks of a trace (Python frames, operators and annotations) as "
            "folded-stacks lines 'frame;frame;leaf value' with values in microseconds, for flamegraph.pl, "
            "speedscope or any flame graph tool."
        ),
    )
    parser.add_argument("trace", help="a trace file (.json or .json.gz)")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")
    parser.add_argument("--weight", choices=("host", "device"), default="host",
                        help="host self time (default) or device time of launched kernels")
    parser.set_defaults(handler=_run_stacks)


def _run_stacks(args: argparse.Namespace) -> int:
    from profscope.tb_plugin.ingest import TraceLoadError, load_trace
    from profscope.tb_plugin.views.stacks import folded_stacks

    try:
        text = folded_stacks(load_trace(args.trace), args.weight)
    except (TraceLoadError, OSError) as error:
        raise CommandError(str(error)) from None
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


# --- entry point --------------------------------------------------------------------

_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_import_parser,
    _add_demo_parser,
    _add_stacks_parser,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="profscope", description="Profscope: profiler runs seen in TensorBoard.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_parser in _SUBCOMMANDS:
        add_parser(subparsers)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except CommandError as error:
        print(f"profscope {args.command}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"profscope {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
