"""Pieces of the end-to-end harness that the tests import (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

# The runs of the test logdir (see conftest.e2e_logdir).
TORCH_RUN = "mlp"
NESTED_RUN = "group/resnet"
BROKEN_RUN = "broken"


@dataclass(frozen=True)
class TensorBoardServer:
    process: subprocess.Popen[bytes]
    port: int
    logdir: Path
    cache_dir: Path
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def plugin_url(self) -> str:
        """The address a person opens to see Profscope's tab."""
        return f"{self.url}/#profscope"

    def get_json(self, route: str, timeout_s: float = 30.0) -> object:
        with urllib.request.urlopen(f"{self.url}{route}", timeout=timeout_s) as response:
            return json.loads(response.read())

    def log_tail(self, max_chars: int = 20_000) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as error:
            return f"(no TensorBoard log: {error})"
        return text[-max_chars:]
