"""The ``profscope`` command line.

One small function per subcommand: ``_add_<name>_parser`` declares its arguments and
``_run_<name>`` does the work and returns the exit status. This module imports
neither torch nor TensorBoard; each subcommand imports what it needs when it runs.

Exit status: 0 on success, 1 when the command fails (the reason is printed on
stderr), 2 for a usage error (argparse).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

if TYPE_CHECKING:  # for annotations only: the subcommands import what they need when they run
    from profscope.tb_plugin.store.discovery import ScanResult, SpanSource
    from profscope.tb_plugin.model.trace_model import TraceModel
    from profscope.tb_plugin.reports.report import SpanViews
    from profscope.tb_plugin.views.quantities.efficiency import PeaksSetting

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


def _int_in(low: int, high: Optional[int], what: str) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high] (no upper bound when high is None)."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return convert


_positive_int = _int_in(1, None, "a positive integer")
_port = _int_in(0, 65535, "a port number (0-65535)")


# --- import -------------------------------------------------------------------------


def _add_import_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import",
        help="bring existing trace files into a logdir",
        description=(
            "Copy Chrome-trace files (.json or .json.gz: torch's <worker>.<ts>.pt.trace.json[.gz], Paddle's "
            "<worker>_time_<date>.paddle_trace.json, MindSpore's <host>_<pid>_<ts>_ascend_ms/ASCEND_PROFILER_OUTPUT/"
            "trace_view.json or ascend|gpu_timeline_display_<rank>.json, any Chrome trace) "
            "into <logdir>/<run>/plugins/profscope/ as writer spans (gzip + manifest, written atomically), "
            "and record them with their performance scalars in a TensorBoard event file of the run folder. "
            "The framework is detected from each file's content. Every file is checked before any is written."
        ),
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="trace files to import (or MindSpore *_ascend_ms folders)"
    )
    parser.add_argument("--logdir", required=True, help="the TensorBoard logdir")
    parser.add_argument("--run", required=True, help="run folder under the logdir (may be nested: group/exp1)")
    parser.add_argument(
        "--worker",
        help="worker name (default: from a torch, Paddle or MindSpore file name, else the file name without .json[.gz])",
    )
    parser.add_argument(
        "--framework",
        help="framework that wrote the traces, [a-z0-9_]+ (default: detected per file: pytorch, paddle, mindspore "
        "or generic)",
    )
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
    from profscope.tb_plugin.ingest.load import TraceLoadError, load_trace
    from profscope.tb_plugin.views.answers import folded_stacks

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


# --- summary and report: shared --------------------------------------------------------


# The operator orders of ``summary --sort`` (report.OPERATOR_SORT_KEYS; kept here so that building
# the parser imports no analysis code).
_SORT_KEYS = ("device_self", "device_total", "host_self", "host_total", "calls")
# The tables of ``summary --csv``.
_CSV_TABLES = ("operators", "kernels", "steps")


def _add_span_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--worker", help="worker (rank) of the run (default: the run's only worker)")
    parser.add_argument("--span", help="span of the worker (default: the last one)")


# Skipped files named at most in one message.
_SKIPPED_NAMED = 5


def _skipped_note(scanned: "ScanResult", folder: str) -> str:
    """What discovery skipped in a folder of the logdir and why, as the end of a message ("" when nothing)."""
    from profscope.tb_plugin.store.discovery import SKIP_REASON_TEXTS

    skipped = scanned.skipped.under(folder)
    if not skipped:
        return ""
    lines = [f"\n  {path}: {SKIP_REASON_TEXTS.get(reason, reason)}" for path, reason in skipped[:_SKIPPED_NAMED]]
    more = f"\n  ... and {len(skipped) - _SKIPPED_NAMED} more" if len(skipped) > _SKIPPED_NAMED else ""
    files = "file was" if len(skipped) == 1 else "files were"
    return f"; {len(skipped)} {files} skipped there:{''.join(lines)}{more}"


def _select_span(scanned: "ScanResult", logdir: str, run: str, worker: Optional[str],
                 span: Optional[str]) -> "SpanSource":
    """The one span that (run, worker, span) names among the logdir's sources; the last span by default. A run
    or worker that is not found is explained by the files that discovery skipped in its folder."""
    from profscope.tb_plugin import layout

    sources = scanned.sources
    in_run = [s for s in sources if s.run == run]
    if not in_run:
        folder = os.path.join(logdir, run)
        if os.path.isdir(folder) and (note := _skipped_note(scanned, run)):
            raise CommandError(f"run {run!r} of logdir {logdir!r} holds no trace Profscope reads{note}")
        runs = sorted({s.run for s in sources})
        known = f"runs: {', '.join(repr(r) for r in runs)}" if runs else "no trace files were found"
        raise CommandError(f"no run {run!r} in logdir {logdir!r} ({known}){_skipped_note(scanned, '.') if not runs else ''}")
    workers = sorted({s.worker for s in in_run})
    if worker is None:
        if len(workers) > 1:
            raise CommandError(f"run {run!r} has several workers ({', '.join(workers)}): name one with --worker")
        worker = workers[0]
    of_worker = sorted((s for s in in_run if s.worker == worker), key=lambda s: layout.span_sort_key(s.span))
    if not of_worker:
        raise CommandError(f"no worker {worker!r} in run {run!r} (workers: {', '.join(workers)})"
                           f"{_skipped_note(scanned, run)}")
    if span is None:
        return of_worker[-1]
    for source in of_worker:
        if source.span == span:
            return source
    spans = ", ".join(s.span for s in of_worker)
    raise CommandError(f"no span {span!r} of worker {worker!r} in run {run!r} (spans: {spans})")


def _scan(logdir: str) -> "ScanResult":
    from profscope.tb_plugin.store.discovery import scan

    if not os.path.isdir(logdir):
        raise CommandError(f"logdir {logdir!r} is not a folder")
    return scan(logdir)


def _manifest_batch_size(source: "SpanSource") -> Optional[int]:
    """The writer manifest's batch size, when it is a positive integer (a manifest is a file: untrusted)."""
    value = (source.manifest or {}).get("batch_size")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _load_model(path: str) -> "TraceModel":
    """The parsed trace: from the local model cache, else from its current pack (``profscope ingest``), else parsed
    (in two processes)."""
    from profscope.tb_plugin.store.cache import ModelCache, local_identity
    from profscope.tb_plugin.ingest.load import TraceLoadError
    from profscope.tb_plugin.store import packs

    cache = ModelCache()
    try:
        identity = local_identity(path)
        model = cache.load(identity)
        if model is not None:
            return model
        root = packs.PackRoot(os.path.dirname(os.path.abspath(path)))
        ref = root.find(os.path.basename(path), identity.size, identity.mtime_ns, None)
        if ref is not None:
            try:
                return packs.load_model(root, ref, cache, identity)
            except packs.PackError as error:
                print(f"profscope: the pack of {path} is not used ({error}); parsing the trace", file=sys.stderr)
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror or error}") from None
    try:
        return cache.load_or_build(path, parallel=True)
    except (TraceLoadError, OSError) as error:
        raise CommandError(f"{path}: {error}") from None


def _collect_source(source: "SpanSource", group_by: str = "name", peaks: Optional["PeaksSetting"] = None,
                    logdir: Optional[str] = None) -> tuple["SpanViews", "TraceModel"]:
    import dataclasses

    from profscope.tb_plugin.reports.report import collect_span

    model = _load_model(source.path)
    label = f"{source.run} · {source.worker} · {source.span}"
    details = {"run": source.run, "worker": source.worker, "span": source.span}
    views = collect_span(model, label, group_by, _manifest_batch_size(source), details, peaks)
    snapshot = _span_snapshot(logdir, source) if logdir is not None else None
    return (dataclasses.replace(views, snapshot=snapshot) if snapshot is not None else views), model


def _peaks_setting(path: Optional[str]) -> "PeaksSetting":
    """The user's device peaks (``--device-peaks FILE``, else PROFSCOPE_DEVICE_PEAKS); a file that cannot be used is
    the command's error."""
    from profscope.tb_plugin.views.quantities.efficiency import PeaksSetting

    setting = PeaksSetting.load(path or os.environ.get("PROFSCOPE_DEVICE_PEAKS"))
    if setting.error:
        raise CommandError(setting.error)
    return setting


def _add_peaks_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device-peaks", metavar="FILE",
                        help="JSON file of device peaks (FLOP/s per precision, memory bandwidth) for devices the "
                        "built-in table does not list, or measured peaks (default: PROFSCOPE_DEVICE_PEAKS)")


def _span_snapshot(logdir: str, source: "SpanSource") -> Optional[dict[str, Any]]:
    """The peak of the span's memory snapshot (the one named as its trace or the writer's beside it, else the run's
    only one), when the run has one; a snapshot that cannot be read is said on stderr and left out."""
    from profscope.tb_plugin.store import discovery, snapshots
    from profscope.tb_plugin.store.storage import FileAccess
    from profscope.tb_plugin.views import answers

    found = [s for s in discovery.scan(logdir).snapshots if s.run == source.run]
    mine = [s for s in found if (s.worker, s.span) == (source.worker, source.span)]
    chosen = mine[0] if mine else found[0] if len(found) == 1 and found[0].span is None else None
    if chosen is None:
        return None
    try:
        model = snapshots.read_model(FileAccess(roots=(os.path.realpath(logdir),)), chosen.path)
    except Exception as error:  # noqa: BLE001 - the summary of the trace stands without it
        print(f"profscope: memory snapshot {chosen.name} left out: {error}", file=sys.stderr)
        return None
    return answers.snapshot_peak_summary(model, chosen.name)


# --- summary ------------------------------------------------------------------------


def _add_summary_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "summary",
        help="print a span's summary to the terminal",
        description=(
            "Print one span's step-time breakdown, GPU summary, benchmark figures, top operators and kernels "
            "and memory peak as plain-text tables (like torch's key_averages().table()). Name the span by "
            "its trace file, or by --logdir and --run (with --worker and --span when needed)."
        ),
    )
    parser.add_argument("trace", nargs="?", help="a trace file (.json or .json.gz)")
    parser.add_argument("--logdir", help="a TensorBoard logdir, to name the span by run instead of by file")
    parser.add_argument("--run", help="run folder under the logdir ('.' for the logdir itself)")
    _add_span_arguments(parser)
    parser.add_argument("--top", type=_positive_int, default=10, help="rows of the operator and kernel tables (10)")
    parser.add_argument("--group-by", choices=("name", "input_shape"), default="name",
                        help="group operators by name (default) or by name and input shape")
    parser.add_argument("--sort", choices=_SORT_KEYS,
                        help="operator order (default: device_self when the span ran GPU work, else host_self)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true",
                        help="print JSON for scripts: the overview (breakdown, GPUs, benchmark, recommendations), the "
                             "top operators and kernels, the memory peaks, in the routes' units (µs, bytes, 0..1)")
    output.add_argument("--csv", choices=_CSV_TABLES, nargs="?", const="operators", metavar="TABLE",
                        help="print one table as CSV, every row: operators (default), kernels or steps (each step's "
                             "time by category); the same columns as the page's Download CSV")
    _add_peaks_argument(parser)
    parser.set_defaults(handler=_run_summary, usage_error=parser.error)


def _run_summary(args: argparse.Namespace) -> int:
    from profscope.tb_plugin.reports.report import collect_span
    from profscope.tb_plugin.reports.summary import summary_text

    by_file = args.trace is not None
    if by_file == (args.logdir is not None) or (args.logdir is not None) != (args.run is not None):
        args.usage_error("name the span either by TRACE or by --logdir and --run")
    if by_file and (args.worker or args.span):
        args.usage_error("--worker and --span go with --logdir and --run")
    peaks = _peaks_setting(args.device_peaks)
    if by_file:
        model = _load_model(args.trace)
        span = collect_span(model, os.path.basename(args.trace), args.group_by, details={"file": args.trace},
                            peaks=peaks)
    else:
        source = _select_span(_scan(args.logdir), args.logdir, args.run, args.worker, args.span)
        span, _ = _collect_source(source, args.group_by, peaks, args.logdir)
    if args.json:
        from profscope.tb_plugin.reports.summary import summary_json
        from profscope.tb_plugin.views.encoding import to_json_bytes

        sys.stdout.write(to_json_bytes(summary_json(span, top=args.top, sort=args.sort)).decode("utf-8") + "\n")
    elif args.csv:
        from profscope.tb_plugin.reports.summary import summary_csv

        sys.stdout.write(summary_csv(span, args.csv, sort=args.sort))
    else:
        sys.stdout.write(summary_text(span, top=args.top, sort=args.sort))
    return 0


# --- report -------------------------------------------------------------------------


def _add_report_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report of a run (optionally compared with another)",
        description=(
            "Write one HTML file with a span's overview (step-time chart, breakdown, GPU summary, "
            "recommendations), top operators and kernels and memory peak; with --vs, the comparison of the "
            "two spans first. The file needs no network and no script: send it to a teammate."
        ),
    )
    parser.add_argument("run", metavar="RUN", help="run folder under the logdir (the baseline with --vs)")
    parser.add_argument("--vs", metavar="RUN2", help="a second run (the experiment) to compare with RUN")
    parser.add_argument("--logdir", required=True, help="the TensorBoard logdir")
    parser.add_argument("-o", "--output", default="report.html", help="the HTML file to write (report.html)")
    _add_span_arguments(parser)
    parser.add_argument("--vs-worker", help="worker of RUN2 (default: --worker, else RUN2's only worker)")
    parser.add_argument("--vs-span", help="span of RUN2 (default: the last one)")
    parser.add_argument("--top", type=_positive_int, default=20, help="rows of the operator and kernel tables (20)")
    parser.set_defaults(handler=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    from profscope.tb_plugin.reports.report_html import report_html
    from profscope.tb_plugin.views.answers import CompareSide, compare

    scanned = _scan(args.logdir)
    base_source = _select_span(scanned, args.logdir, args.run, args.worker, args.span)
    base, base_model = _collect_source(base_source, logdir=args.logdir)
    exp = comparison = None
    if args.vs is not None:
        exp_source = _select_span(scanned, args.logdir, args.vs, args.vs_worker or args.worker, args.vs_span)
        exp, exp_model = _collect_source(exp_source, logdir=args.logdir)
        comparison = compare(
            CompareSide(base_source.run, base_source.worker, base_source.span, base_model,
                        _manifest_batch_size(base_source)),
            CompareSide(exp_source.run, exp_source.worker, exp_source.span, exp_model,
                        _manifest_batch_size(exp_source)),
        )
    generated = f"Written by profscope report on {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}."
    page = report_html(base, top=args.top, exp=exp, comparison=comparison, generated=generated)
    try:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(page)
    except OSError as error:
        raise CommandError(f"cannot write {args.output!r}: {error.strerror or error}") from None
    print(f"wrote {args.output} ({os.path.getsize(args.output) / 1024:.0f} KiB): open it in any browser, "
          "no network needed")
    return 0


# --- serve --------------------------------------------------------------------------


def _add_serve_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve Profscope's page for a logdir, without TensorBoard",
        description=(
            "Serve the PROFSCOPE tab's page and routes on their own (for Paddle/VisualDL, MindSpore or any "
            "job without TensorBoard): open the printed address in a browser. Ctrl-C stops the server."
        ),
    )
    parser.add_argument("--logdir", required=True, help="the logdir (a folder, or an s3:// gs:// az:// hdfs:// URL)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=_port, default=6007, help="port to listen on (default 6007; 0 picks a free one)")
    parser.add_argument("--cache-dir", help="folder for the parsed-trace cache (default: PROFSCOPE_CACHE_DIR or the "
                        "user cache folder)")
    parser.add_argument("--link-root", action="append", metavar="DIR", dest="link_roots",
                        help="a folder outside the logdir that its symlinks may lead into (repeatable; default: "
                        "PROFSCOPE_LINK_ROOTS); other links out of the logdir are not read")
    _add_peaks_argument(parser)
    parser.add_argument("--packs", metavar="URL", help="where `profscope ingest --packs` wrote the packs of a read-only "
                        "logdir (default: beside the traces)")
    parser.set_defaults(handler=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    from profscope.tb_plugin.server.serve import ServeError, serve

    if "://" not in args.logdir and not os.path.isdir(args.logdir):
        raise CommandError(f"logdir {args.logdir!r} is not a folder")
    if args.device_peaks:
        _peaks_setting(args.device_peaks)  # a file that cannot be used is the command's error, before serving
    try:
        serve(args.logdir, host=args.host, port=args.port, cache_dir=args.cache_dir, link_roots=args.link_roots,
              device_peaks=args.device_peaks, packs=args.packs)
    except ServeError as error:
        raise CommandError(str(error)) from None
    return 0


# --- ingest -------------------------------------------------------------------------


def _add_ingest_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="parse every trace of a logdir into packs that every teammate's TensorBoard opens without parsing",
        description=(
            "Parse each trace file of LOGDIR (a folder or an s3:// gs:// az:// hdfs:// URL) into its pack: the "
            "parsed model, the answers the pages ask first and the rank's summary (Parquet), written beside the "
            "trace in a .profscope folder (or under --packs). One file is one task, on this machine's parser "
            "processes (--engine local) or on a Dask cluster (--engine dask). Files whose pack is current are "
            "skipped; changed ones are ingested again. Exits 1 when a file failed (each is listed with its reason)."
        ),
    )
    parser.add_argument("logdir", metavar="LOGDIR", help="the logdir (a folder or a URL)")
    parser.add_argument("--packs", metavar="URL", help="where packs go when the logdir is read-only (a folder or a "
                        "URL); give TensorBoard the same with --profscope_packs")
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local: this machine's parser processes (default); dask: a Dask cluster")
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="the Dask scheduler to use (--engine dask)")
    parser.add_argument("--scheduler-file", metavar="FILE", help="the Dask scheduler's file (--engine dask)")
    parser.add_argument("--workers", type=_positive_int,
                        help="parser processes (local) or LocalCluster workers (dask, default: one per core)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per file done, and a last one with the totals (for scripts)")
    parser.set_defaults(handler=_run_ingest, usage_error=parser.error)


def _run_ingest(args: argparse.Namespace) -> int:
    import json as json_module

    from profscope.tb_plugin.store import ingest
    from profscope.tb_plugin.store.storage import LogdirUnreadable

    if (args.scheduler or args.scheduler_file) and args.engine != "dask":
        args.usage_error("--scheduler and --scheduler-file go with --engine dask")
    if "://" not in args.logdir and not os.path.isdir(args.logdir):
        raise CommandError(f"logdir {args.logdir!r} is not a folder")
    if args.engine == "dask":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise CommandError("--engine dask needs Dask: pip install 'profscope[cluster]'") from None
    try:
        tasks = ingest.plan(args.logdir, args.packs)
    except LogdirUnreadable as error:
        raise CommandError(str(error)) from None
    progress = ingest.Progress(len(tasks), sum(t.size for t in tasks))
    terminal = sys.stderr.isatty() and not args.json

    def report(result: "ingest.IngestResult") -> None:
        progress.add(result)
        if args.json:
            print(json_module.dumps({"file": result.relative, "status": result.status, "error": result.error,
                                     "seconds": round(result.seconds, 3), "attempts": result.attempts,
                                     "progress": progress.as_json()}), flush=True)
        elif terminal:
            print("\r" + progress.line(), end="", file=sys.stderr, flush=True)
        elif result.status == "failed" or progress.files == progress.total_files or progress.files % 50 == 0:
            print(progress.line(), file=sys.stderr, flush=True)

    if args.engine == "dask":
        results = ingest.run_dask(tasks, report, scheduler=args.scheduler, scheduler_file=args.scheduler_file,
                                  workers=args.workers)
    else:
        results = ingest.run_local(tasks, report, workers=args.workers)
    if terminal:
        print(file=sys.stderr)
    failed = list(ingest.failures(results))
    totals = {**progress.as_json(), "failures": [{"file": r.relative, "error": r.error} for r in failed]}
    if args.json:
        print(json_module.dumps({"summary": totals}))
    else:
        print(f"profscope ingest: {progress.ingested} ingested, {progress.current} already current, "
              f"{len(failed)} failed, of {len(tasks)} file(s) in {totals['elapsed_s']:.1f} s")
        for result in failed:
            print(f"  failed: {result.relative}: {result.error}", file=sys.stderr)
    return 1 if failed else 0


# --- entry point --------------------------------------------------------------------

_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction], None], ...] = (
    _add_import_parser,
    _add_demo_parser,
    _add_stacks_parser,
    _add_summary_parser,
    _add_report_parser,
    _add_serve_parser,
    _add_ingest_parser,
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
