"""Profscope: profiler runs of deep-learning jobs, seen in TensorBoard.

The folders ``tb_plugin/`` and ``writer/`` install as ``profscope.tb_plugin`` and
``profscope.writer``, and ``profscope/`` (the Python API, ``from profscope import open_trace``)
as ``profscope``. Building the package also builds the TypeScript frontend
(``frontend/``) into ``tb_plugin/static/``; nothing built is committed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
FRONTEND = os.path.join(HERE, "frontend")
BUNDLE = os.path.join(HERE, "tb_plugin", "static", "index.js")
VERSION = "0.1.0"


def _newest_mtime(folder: str) -> float:
    newest = 0.0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("node_modules", "dist")]
        for name in files:
            newest = max(newest, os.path.getmtime(os.path.join(root, name)))
    return newest


def build_frontend() -> None:
    """Build the frontend bundle with the pinned npm packages (package-lock.json)."""
    if os.environ.get("PROFSCOPE_SKIP_FRONTEND") == "1" and os.path.exists(BUNDLE):
        return
    if not os.path.isdir(FRONTEND):  # building from an sdist that ships the bundle
        if os.path.exists(BUNDLE):
            return
        sys.exit("profscope: frontend/ is missing and no built bundle exists")
    if os.path.exists(BUNDLE) and os.path.getmtime(BUNDLE) >= _newest_mtime(FRONTEND):
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit(
            "profscope: building the frontend needs Node.js and npm (https://nodejs.org); "
            "install them, or install a wheel that already contains the bundle"
        )
    if not os.path.isdir(os.path.join(FRONTEND, "node_modules")):
        subprocess.check_call([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND)
    subprocess.check_call([npm, "run", "build"], cwd=FRONTEND)
    if not os.path.exists(BUNDLE):
        sys.exit(f"profscope: the frontend build did not produce {BUNDLE}")


class BuildPyWithFrontend(build_py):
    def run(self) -> None:
        build_frontend()
        super().run()


setup(
    name="profscope",
    version=VERSION,
    description="Profiler runs of deep-learning jobs, seen in TensorBoard",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    if os.path.exists(os.path.join(HERE, "README.md"))
    else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    package_dir={
        "profscope": "profscope",
        "profscope.tb_plugin": "tb_plugin",
        "profscope.writer": "writer",
    },
    # Every subpackage of the two folders (tb_plugin/__init__.py lists its layers).
    packages=["profscope", "profscope.tb_plugin", "profscope.writer"]
    + [f"profscope.tb_plugin.{name}" for name in find_packages(os.path.join(HERE, "tb_plugin"))],
    package_data={"profscope.tb_plugin": ["static/*", "static/**/*", "api/*.yaml"]},
    include_package_data=False,
    install_requires=[
        "tensorboard>=2.16,<3",
        "protobuf>=3.20,<8",
        "werkzeug>=2.2,<4",
        "numpy>=1.24,<3",
        "msgspec>=0.18,<1",
        "isal>=1.6,<2",
        "platformdirs>=3,<5",
    ],
    extras_require={
        # The CPU build lies on this machine's disk; an unpinned torch pulls a CUDA build.
        "torch": ["torch==2.13.0"],
        # Remote logdirs (tb_plugin/store/storage.py), read through fsspec: one extra per kind of store.
        "s3": ["fsspec==2026.9.0", "s3fs==2026.9.0"],
        "gcs": ["fsspec==2026.9.0", "gcsfs==2026.10.1"],
        "azure": ["fsspec==2026.9.0", "adlfs==2026.8.0"],
        # pyarrow's HDFS client also needs Hadoop's libhdfs and a JVM on the machine (see the README).
        "hdfs": ["fsspec==2026.9.0", "pyarrow==26.0.1"],
        # Jobs of many ranks (``profscope ingest --engine dask``, tb_plugin/cluster/): Dask's distributed scheduler,
        # and pyarrow for the per-rank summaries (Parquet) that the cross-rank answers read.
        "cluster": ["dask[distributed]==2026.8.0", "distributed==2026.8.0", "pyarrow==26.0.1"],
        # paddlepaddle==3.3.1 (CPU) is left out on purpose: a 195 MB wheel, 720 MB installed. The Paddle
        # writer's tests use real Paddle traces; tests/test_writer_paddle.py runs Paddle too when installed.
        "test": [
            "pytest==9.0.3",
            "selenium==4.38.0",
            "psutil==7.2.2",
            "pyyaml==6.0.3",
            "jsonschema==4.26.0",
            # tests/test_remote_logdir.py: a real S3-compatible server (moto's) on 127.0.0.1.
            "moto[server]==5.2.5",
            "boto3==1.43.117",  # the botocore of aiobotocore 3.10.0 (s3fs), which moto uses too
            "fsspec==2026.9.0",
            "s3fs==2026.9.0",
            # tests/test_hta_agreement.py: Holistic Trace Analysis (holistictraceanalysis==0.5.0) is installed
            # without its dependencies by scripts/ensure_venv.sh (they include jupyterlab); these are the ones
            # its analyses use.
            "pandas==2.3.3",
            "plotly==5.24.1",
            "pydot==3.0.4",
            "networkx==3.6.1",
        ],
    },
    entry_points={
        "tensorboard_plugins": [
            "profscope = profscope.tb_plugin.server.loader:ProfscopeLoader",
        ],
        "console_scripts": [
            "profscope = profscope.tb_plugin.reports.cli:main",
        ],
    },
    # The decoder's fast path (tb_plugin/ingest/chrome/_columnar.c). Optional: without a C compiler the
    # package still installs, and the decoder reads every chunk through msgspec (slower, same answers).
    ext_modules=[
        Extension(
            "profscope.tb_plugin.ingest.chrome._columnar",
            sources=["tb_plugin/ingest/chrome/_columnar.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        # The memory snapshot reader's fast path (tb_plugin/ingest/snapshot/_snapshot_reader.c). Optional too: without
        # it reader.py's machine reads snapshots (slower, same answers).
        Extension(
            "profscope.tb_plugin.ingest.snapshot._snapshot_reader",
            sources=["tb_plugin/ingest/snapshot/_snapshot_reader.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ],
    cmdclass={"build_py": BuildPyWithFrontend},
    zip_safe=False,
)
