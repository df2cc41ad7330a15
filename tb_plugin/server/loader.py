"""TensorBoard entry point: the plugin's command-line flags and its construction."""

from __future__ import annotations

import argparse
import os
from typing import Optional

from tensorboard.plugins import base_plugin


class ProfscopeLoader(base_plugin.TBLoader):
    def define_flags(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("profscope")
        group.add_argument(
            "--profscope_cache_dir",
            metavar="DIR",
            default=None,
            help="Folder for Profscope's parsed-trace cache (default: PROFSCOPE_CACHE_DIR or the user cache dir).",
        )
        group.add_argument(
            "--profscope_cache_max_gb",
            metavar="GB",
            type=float,
            default=None,
            help="Size bound of that cache; least recently used entries beyond it are removed "
                 "(default: PROFSCOPE_CACHE_MAX_GB or 20).",
        )
        group.add_argument(
            "--profscope_refresh_seconds",
            metavar="SECONDS",
            type=float,
            default=5.0,
            help="How often Profscope rescans the logdir for new runs and spans (default 5).",
        )
        group.add_argument(
            "--profscope_parse_timeout_seconds",
            metavar="SECONDS",
            type=float,
            default=None,
            help="Longest a trace may take to parse before its parse is stopped and the span fails "
                 "(default: PROFSCOPE_PARSE_TIMEOUT_SECONDS or 1800).",
        )
        group.add_argument(
            "--profscope_parse_memory_gb",
            metavar="GB",
            type=float,
            default=None,
            help="Memory that parses running at once may take together, by their estimates; a larger one runs "
                 "alone (default: PROFSCOPE_PARSE_MEMORY_GB or half the memory available at start).",
        )
        group.add_argument(
            "--profscope_device_peaks",
            metavar="FILE",
            default=None,
            help="JSON file of device peaks (FLOP/s per precision, memory bandwidth) for devices the built-in table "
                 "does not list, or measured peaks that replace its figures; the format is in Profscope's README "
                 "(default: PROFSCOPE_DEVICE_PEAKS).",
        )
        group.add_argument(
            "--profscope_link_roots",
            metavar="DIRS",
            default=None,
            help="Folders outside the logdir that its symlinks may lead into (separated like PATH), for runs "
                 "linked into a logdir on purpose; any other link out of the logdir is not read "
                 "(default: PROFSCOPE_LINK_ROOTS).",
        )

        group.add_argument(
            "--profscope_packs",
            metavar="URL",
            default=None,
            help="Where `profscope ingest --packs URL` wrote the packs of a read-only logdir (a folder or a URL); "
                 "by default packs are looked for beside the traces. A trace with a current pack is not parsed.",
        )

    def fix_flags(self, flags: argparse.Namespace) -> None:
        seconds: Optional[float] = getattr(flags, "profscope_refresh_seconds", None)
        if seconds is not None and seconds <= 0:
            raise base_plugin.FlagsError("--profscope_refresh_seconds must be positive")
        max_gb: Optional[float] = getattr(flags, "profscope_cache_max_gb", None)
        if max_gb is not None and max_gb < 0:
            raise base_plugin.FlagsError("--profscope_cache_max_gb must not be negative")
        for name in ("profscope_parse_timeout_seconds", "profscope_parse_memory_gb"):
            value: Optional[float] = getattr(flags, name, None)
            if value is not None and value <= 0:
                raise base_plugin.FlagsError(f"--{name} must be positive")
        peaks: Optional[str] = getattr(flags, "profscope_device_peaks", None)
        if peaks:
            from ..views.quantities.device_peaks import PeaksFileError, load_peaks_file

            try:
                load_peaks_file(peaks)
            except PeaksFileError as error:
                raise base_plugin.FlagsError(f"--profscope_device_peaks: {error}") from None

    def load(self, context: base_plugin.TBContext) -> base_plugin.TBPlugin:
        from .plugin import ProfscopePlugin

        flags = context.flags
        link_roots: Optional[str] = getattr(flags, "profscope_link_roots", None) if flags else None
        return ProfscopePlugin(
            context,
            cache_dir=getattr(flags, "profscope_cache_dir", None) if flags else None,
            refresh_seconds=getattr(flags, "profscope_refresh_seconds", 5.0) if flags else 5.0,
            cache_max_gb=getattr(flags, "profscope_cache_max_gb", None) if flags else None,
            parse_timeout_seconds=getattr(flags, "profscope_parse_timeout_seconds", None) if flags else None,
            parse_memory_gb=getattr(flags, "profscope_parse_memory_gb", None) if flags else None,
            link_roots=None if link_roots is None else [p for p in link_roots.split(os.pathsep) if p],
            packs=getattr(flags, "profscope_packs", None) if flags else None,
            device_peaks=getattr(flags, "profscope_device_peaks", None) if flags else None,
        )
