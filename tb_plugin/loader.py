"""TensorBoard entry point: the plugin's command-line flags and its construction."""

from __future__ import annotations

import argparse
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

    def fix_flags(self, flags: argparse.Namespace) -> None:
        seconds: Optional[float] = getattr(flags, "profscope_refresh_seconds", None)
        if seconds is not None and seconds <= 0:
            raise base_plugin.FlagsError("--profscope_refresh_seconds must be positive")
        max_gb: Optional[float] = getattr(flags, "profscope_cache_max_gb", None)
        if max_gb is not None and max_gb < 0:
            raise base_plugin.FlagsError("--profscope_cache_max_gb must not be negative")

    def load(self, context: base_plugin.TBContext) -> base_plugin.TBPlugin:
        from .plugin import ProfscopePlugin

        flags = context.flags
        return ProfscopePlugin(
            context,
            cache_dir=getattr(flags, "profscope_cache_dir", None) if flags else None,
            refresh_seconds=getattr(flags, "profscope_refresh_seconds", 5.0) if flags else 5.0,
            cache_max_gb=getattr(flags, "profscope_cache_max_gb", None) if flags else None,
        )
