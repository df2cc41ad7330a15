#!/usr/bin/env bash
# Makes sure the repository's virtualenv (.venv) exists and has Profscope installed, in
# editable mode, with the extras given as the first argument (comma-separated, e.g.
# "torch" or "test,torch").
#
# pip runs only when needed: after an install, one stamp file per extra (and one for the
# base package) records a hash of the files that decide what gets installed (setup.py,
# pyproject.toml, the frontend's package.json and package-lock.json) and of the Python
# interpreter. A second run with the same inputs does nothing; `make demo` after
# `make test` does nothing either, since "torch" was already installed then.
#
# Environment: PYTHON (the interpreter that creates the venv, default python3),
#              VENV (default .venv).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

extras="${1:-}"
python="${PYTHON:-python3}"
venv="${VENV:-.venv}"

if [[ ! -x "$venv/bin/python" ]]; then
    echo "ensure_venv: creating $venv with $python"
    if ! "$python" -m venv "$venv"; then
        echo "ensure_venv: '$python -m venv' failed. On Debian, install python3-venv" >&2
        echo "  (apt-get install python3-venv), or set PYTHON to an interpreter that has venv." >&2
        rm -rf "$venv"
        exit 1
    fi
fi

# What decides the installed set. A missing file hashes as empty, so adding one later
# (the frontend's lock file, say) changes the key too; so does a change of this script.
key_inputs() {
    local file
    for file in setup.py pyproject.toml frontend/package.json frontend/package-lock.json scripts/ensure_venv.sh \
            tb_plugin/ingest/chrome/_columnar.c tb_plugin/ingest/snapshot/_snapshot_reader.c; do
        printf '%s\n' "$file"
        if [[ -f "$file" ]]; then cat "$file"; fi
    done
    "$venv/bin/python" -c 'import sys; print(sys.version)'
}
key="$(key_inputs | sha256sum | cut -d' ' -f1)"

stamp_for() { printf '%s/.profscope-install-%s.stamp' "$venv" "$1"; }

IFS=',' read -r -a wanted <<<"$extras"
up_to_date=1
for extra in base "${wanted[@]}"; do
    [[ -z "$extra" ]] && continue
    stamp="$(stamp_for "$extra")"
    if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$key" ]]; then
        up_to_date=0
    fi
done
if [[ "$up_to_date" -eq 1 ]]; then
    echo "ensure_venv: $venv is up to date (extras: ${extras:-none})"
    exit 0
fi

target="."
if [[ -n "$extras" ]]; then target=".[$extras]"; fi
echo "ensure_venv: pip install -e '$target' into $venv"
# Editable, so tests and the demo run the working tree's Python code and its freshly
# built frontend bundle (tb_plugin/static/) without reinstalling. The torch extra pins
# the CPU build (torch==2.13.0); never ask for an unpinned torch here.
"$venv/bin/python" -m pip install --disable-pip-version-check -e "$target"

# The test extra's reference: HTA without its declared dependencies (jupyterlab among them); the ones its
# analyses import are pinned in setup.py's test extra.
if [[ ",$extras," == *",test,"* ]]; then
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-deps "holistictraceanalysis==0.5.0"
fi

# A stale stamp of an extra that was not installed this time must not vouch for it.
rm -f "$venv"/.profscope-install-*.stamp
for extra in base "${wanted[@]}"; do
    [[ -z "$extra" ]] && continue
    printf '%s' "$key" >"$(stamp_for "$extra")"
done
