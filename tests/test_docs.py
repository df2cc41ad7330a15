"""The repository's Markdown renders as written: every code fence is closed by a line holding the fence alone (a
fence closed with text after it is no closing fence on GitHub, and the rest of the page became one code block)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from conftest import REPO

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _markdown_files() -> list[Path]:
    skipped = {"node_modules", ".venv", ".git", "dist", "out"}
    found = []
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in skipped and not d.startswith(".")]
        found += [Path(folder) / name for name in files if name.endswith(".md")]
    return sorted(found)


def fence_problems(text: str) -> list[str]:
    """Where the code fences of a Markdown text do not pair up (CommonMark's rules for fences)."""
    problems: list[str] = []
    open_fence: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if match is None:
            continue
        fence, rest = match.groups()
        if open_fence is None:
            if fence[0] == "`" and "`" in rest:
                problems.append(f"line {number}: a backtick fence whose info text holds a backtick: {line!r}")
            open_fence = (number, fence)
        elif fence[0] == open_fence[1][0] and len(fence) >= len(open_fence[1]):
            if rest.strip():
                problems.append(f"line {number}: the fence opened at line {open_fence[0]} is closed with text after "
                                f"it: {line!r}")
            open_fence = None
    if open_fence is not None:
        problems.append(f"line {open_fence[0]}: a code fence is never closed")
    return problems


def test_the_fence_check_finds_a_fence_closed_with_text() -> None:
    assert fence_problems("```bash\nls\n```\n\ntext\n") == []
    assert fence_problems("```bash\nls\n``` `report` writes one file\nmore\n")
    assert fence_problems("```python\nx = 1\n")
    assert fence_problems("````\n```\n````\n") == []  # a shorter fence inside a longer one is text


def test_every_markdown_file_closes_its_code_fences() -> None:
    files = _markdown_files()
    assert any(path.name == "README.md" for path in files)
    problems = {str(path.relative_to(REPO)): found for path in files
                if (found := fence_problems(path.read_text(encoding="utf-8")))}
    assert problems == {}
