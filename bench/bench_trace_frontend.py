"""Trace viewer benchmark: `trace/slices` latency and payload, and frame times in a browser.

A big Kineto trace (``--events``, default 10 million) is generated from a real seed with
``bench/tracegen.py`` into ``bench/out/`` (git-ignored; reused when it is already there,
deleted at the end unless ``--keep``), served by TensorBoard on 127.0.0.1, and then:

(a) once the run is loaded (``runs`` is polled), ``trace/slices`` is asked at width 2000 px
    for the whole span (``--repeat`` times) and for ``--windows`` random zoomed windows
    (log-uniform lengths from 50 µs to half the span), with ``Accept-Encoding: gzip`` like a
    browser. Printed: median and p95 latency, and the JSON payload (and gzip) size. The
    first request, which builds the level-of-detail index, is reported on its own.
(b) in headless Chromium, the Trace tab is opened, ``window.__profscopeTraceDebug`` makes the
    renderer record every frame (``__profscopeFrameTimes``: requestAnimationFrame timestamps,
    ``__profscopeDrawTimes``: ms spent drawing), and a scripted sequence of wheel zooms,
    W/A/S/D key holds and sideways swipes runs for about ``--frames-seconds``. Printed:
    median and p95 of the interval between frames (idle gaps over 100 ms excluded) and of the
    draw time.

Targets (design §7, printed next to the figures, not asserted): slices under 100 ms median,
under 1 MB at 2000 px, and frames under 16 ms.

Usage (from the repository root, with the project's virtualenv)::

    python bench/bench_trace_frontend.py                       # 10 M events: generation + load take minutes
    python bench/bench_trace_frontend.py --events 200000       # CI smoke run
    python bench/bench_trace_frontend.py --events 10000000 --keep --no-browser

The frontend bundle must be built (``cd frontend && npm run build``) for part (b).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
DEFAULT_SEED = REPO / "tests" / "data" / "kineto_resnet50" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
RUN = "big"
WORKER = "worker0"
SPAN = "1623143089861"  # the generated file keeps the seed's name: worker0.<span>.pt.trace.json.gz
ROUTES = "/data/plugin/profscope/"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--window-size=1600,1000",
)
WIDTH_PX = 2000
MIN_WINDOW_US = 50.0
IDLE_GAP_MS = 100.0
TARGET_SLICES_MS = 100.0
TARGET_PAYLOAD_BYTES = 1_000_000
TARGET_FRAME_MS = 16.0


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 of 50 values is the 48th smallest)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):8.1f}   p95 {percentile(values, 0.95):8.1f}   max {max(values):8.1f}"


# --- the trace -------------------------------------------------------------------------------


def generate(events: int, seed: Path, folder: Path) -> Path:
    """The run folder holding a trace of at least ``events`` events (made once, then reused)."""
    run_dir = folder / "logdir" / RUN
    target = run_dir / f"{WORKER}.{SPAN}.pt.trace.json.gz"
    done_marker = folder / "generated.json"
    if target.is_file() and done_marker.is_file():
        info = json.loads(done_marker.read_text())
        print(f"reusing {target} ({info['events']:,} events)")
        return target
    sys.path.insert(0, str(HERE))
    import tracegen  # noqa: PLC0415 - a sibling script, imported only when needed

    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    loaded = tracegen.load_seed(seed)
    copies = tracegen.copies_for_target(loaded, target_events=events)
    result = tracegen.write_trace(loaded, target, copies=copies, gzip=True)
    done_marker.write_text(json.dumps({"events": result.events, "copies": copies}))
    print(
        f"generated {target}: {result.events:,} events, {result.mb:,.0f} MB uncompressed, "
        f"{target.stat().st_size / 1e6:,.0f} MB gzip, in {time.perf_counter() - started:.1f} s"
    )
    return target


# --- the server ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def get(self, route: str, params: Optional[dict[str, Any]] = None, timeout_s: float = 600.0) -> tuple[int, bytes, int]:
        """(status, JSON body, bytes on the wire) of a plugin route, asked like a browser (gzip)."""
        query = "?" + urllib.parse.urlencode(params) if params else ""
        request = urllib.request.Request(f"{self.url}{ROUTES}{route}{query}", headers={"Accept-Encoding": "gzip"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                raw = response.read()
                body = gzip.decompress(raw) if response.headers.get("Content-Encoding") == "gzip" else raw
                return response.status, body, len(raw)
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, raw, len(raw)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=20)
        except ProcessLookupError:
            pass


def start_tensorboard(logdir: Path, cache_dir: Path, log_path: Path) -> Server:
    script = Path(sys.executable).with_name("tensorboard")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "tensorboard.main"]
    port = free_port()
    env = dict(os.environ, PROFSCOPE_CACHE_DIR=str(cache_dir))
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            launcher + ["--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    server = Server(process, f"http://127.0.0.1:{port}", log_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"TensorBoard exited ({process.returncode}); see {log_path}")
        try:
            with urllib.request.urlopen(f"{server.url}/data/plugins_listing", timeout=5):
                return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"TensorBoard did not start; see {log_path}")


def wait_until_loaded(server: Server, timeout_s: float) -> dict[str, Any]:
    """Polls `runs`, then `trace/tracks`, until the span answers; returns the tracks."""
    started = time.monotonic()
    last_note = 0.0
    span = {"run": RUN, "worker": WORKER, "span": SPAN}
    while time.monotonic() - started < timeout_s:
        status, body, _ = server.get("runs")
        runs = json.loads(body).get("runs", []) if status == 200 else []
        run = next((entry for entry in runs if entry.get("name") == RUN), None)
        if run is not None and run.get("status") == "error":
            raise RuntimeError(f"the run failed to load: {run.get('error')}")
        if run is not None and run.get("status") == "ready":
            status, body, _ = server.get("trace/tracks", span)
            if status == 200:
                print(f"run loaded in {time.monotonic() - started:.1f} s (since TensorBoard answered)")
                return json.loads(body)
        if time.monotonic() - last_note > 15:
            progress = run.get("progress") if run else None
            print(f"  loading… {time.monotonic() - started:.0f} s" + (f" ({progress:.0%})" if isinstance(progress, float) else ""))
            last_note = time.monotonic()
        time.sleep(1.0)
    raise RuntimeError(f"the run did not load within {timeout_s:.0f} s")


# --- (a) slices ------------------------------------------------------------------------------


@dataclass
class SliceSample:
    seconds: float
    json_bytes: int
    wire_bytes: int
    slices: int
    blocks: int


def ask_slices(server: Server, start: float, end: float, track_ids: list[str]) -> SliceSample:
    params = {"run": RUN, "worker": WORKER, "span": SPAN, "start": repr(start), "end": repr(end), "width": WIDTH_PX,
              "tracks": ",".join(track_ids)}
    began = time.perf_counter()
    status, body, wire = server.get("trace/slices", params)
    seconds = time.perf_counter() - began
    if status != 200:
        raise RuntimeError(f"trace/slices answered {status}: {body[:300]!r}")
    answer = json.loads(body)
    slices = sum(len(track["slices"]["id"]) for track in answer["tracks"])
    blocks = sum(len(track["blocks"]["start"]) for track in answer["tracks"])
    return SliceSample(seconds, len(body), wire, slices, blocks)


def random_windows(start: float, end: float, count: int, rng: random.Random) -> Iterator[tuple[float, float]]:
    span = end - start
    for _ in range(count):
        length = math.exp(rng.uniform(math.log(MIN_WINDOW_US), math.log(span / 2)))
        left = start + rng.random() * (span - length)
        yield left, left + length


def report_samples(title: str, samples: list[SliceSample]) -> None:
    print(f"  {title} ({len(samples)} requests)")
    print(f"    latency ms   {summary([s.seconds * 1000 for s in samples])}   (target: median < {TARGET_SLICES_MS:.0f})")
    print(f"    payload KB   {summary([s.json_bytes / 1000 for s in samples])}   (target: < {TARGET_PAYLOAD_BYTES / 1000:.0f})")
    print(f"    gzip KB      {summary([s.wire_bytes / 1000 for s in samples])}")
    print(f"    slices/blocks per answer: median {statistics.median(s.slices for s in samples):,.0f} / "
          f"{statistics.median(s.blocks for s in samples):,.0f}")


def bench_slices(server: Server, tracks: dict[str, Any], repeat: int, windows: int, seed: int) -> None:
    start, end = float(tracks["start"]), float(tracks["end"])
    track_ids = [track["id"] for track in tracks["tracks"] if track.get("kind") != "counter"]
    print(f"\n(a) trace/slices at width {WIDTH_PX}, {len(track_ids)} slice tracks, span {(end - start) / 1e6:,.1f} s")
    first = ask_slices(server, start, end, track_ids)
    print(f"  first request (builds the level-of-detail index): {first.seconds * 1000:,.0f} ms, {first.json_bytes / 1000:,.0f} KB")
    whole = [ask_slices(server, start, end, track_ids) for _ in range(repeat)]
    report_samples("whole span", whole)
    rng = random.Random(seed)
    zoomed = [ask_slices(server, a, b, track_ids) for a, b in random_windows(start, end, windows, rng)]
    report_samples("random zoomed windows (50 µs … half the span)", zoomed)


# --- (b) frames ------------------------------------------------------------------------------

# Runs in the plugin's frame: dispatches `count` wheel events over the canvas, one per 16 ms,
# and calls back when done.
WHEEL_BURST_JS = """
const [deltaX, deltaY, count, done] = arguments;
const canvas = document.querySelector("[data-testid='trace-canvas']");
const rect = canvas.getBoundingClientRect();
const clientX = rect.left + rect.width * 0.6, clientY = rect.top + rect.height * 0.4;
let sent = 0;
const timer = setInterval(() => {
  canvas.dispatchEvent(new WheelEvent("wheel", {deltaX, deltaY, deltaMode: 0, clientX, clientY, bubbles: true, cancelable: true}));
  if (++sent >= count) { clearInterval(timer); done(sent); }
}, 16);
"""


def bench_frames(server: Server, seconds: float, load_timeout_s: float) -> None:
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        print("\n(b) skipped: Chromium or chromedriver is missing")
        return
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in CHROMIUM_ARGUMENTS:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        driver.set_script_timeout(60)
        keys = {"view": "trace", "run": RUN, "worker": WORKER, "span": SPAN}
        driver.get(f"{server.url}/#profscope&" + "&".join(f"p.profscope.{k}={v}" for k, v in keys.items()))
        wait = WebDriverWait(driver, load_timeout_s, poll_frequency=0.25)
        wait.until(ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, "iframe[src*='plugin_entry.html']")))
        viewer = "[data-testid='trace-viewer']"
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"{viewer}[data-ready='true']"))
        canvas = driver.find_element(By.CSS_SELECTOR, "[data-testid='trace-canvas']")
        size = driver.execute_script("const c = arguments[0]; return [c.clientWidth, c.clientHeight];", canvas)
        driver.execute_script(
            "window.__profscopeTraceDebug = true; window.__profscopeFrameTimes = []; window.__profscopeDrawTimes = [];"
            "arguments[0].focus();",
            canvas,
        )
        phase = max(0.3, seconds / 6)
        wheel_events = max(1, int(phase * 1000 / 16))
        began = time.monotonic()
        driver.execute_async_script(WHEEL_BURST_JS, 0, -40, wheel_events)  # zoom in around a point
        actions = ActionChains(driver)
        for key in ("d", "w", "a", "s"):  # pan right, zoom in, pan left, zoom out
            actions.key_down(key).pause(phase).key_up(key)
        actions.perform()
        driver.execute_async_script(WHEEL_BURST_JS, 30, 0, wheel_events)  # sideways swipe: pan
        elapsed = time.monotonic() - began
        time.sleep(0.3)
        frames = driver.execute_script("return window.__profscopeFrameTimes") or []
        draws = driver.execute_script("return window.__profscopeDrawTimes") or []
        stats = driver.execute_script("return window.__profscopeTraceStats") or {}
    finally:
        driver.quit()
    intervals = [b - a for a, b in zip(frames, frames[1:]) if b - a <= IDLE_GAP_MS]
    print(f"\n(b) headless Chromium, canvas {size[0]}x{size[1]} CSS px, {elapsed:.1f} s of wheel zoom, W/A/S/D and swipes")
    if not intervals:
        print("  no frames recorded")
        return
    print(f"  {len(frames)} frames; {len(frames) - 1 - len(intervals)} idle gaps over {IDLE_GAP_MS:.0f} ms left out")
    print(f"  frame interval ms  {summary(intervals)}   (target: median < {TARGET_FRAME_MS:.0f})")
    print(f"  draw time ms       {summary(draws)}")
    print(f"  last frame: {json.dumps(stats)}")


# --- main ------------------------------------------------------------------------------------


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000, help="at least this many events (default 10 M)")
    parser.add_argument("--seed", type=Path, default=DEFAULT_SEED, help="a real Kineto trace to replicate")
    parser.add_argument("--repeat", type=int, default=20, help="whole-span requests (default 20)")
    parser.add_argument("--windows", type=int, default=50, help="random zoomed windows (default 50)")
    parser.add_argument("--random-seed", type=int, default=0)
    parser.add_argument("--frames-seconds", type=float, default=5.0, help="length of the scripted pan/zoom (default 5)")
    parser.add_argument("--no-browser", action="store_true", help="skip the frame-time part")
    parser.add_argument("--load-timeout", type=float, default=3600.0, help="seconds to wait for the run to load")
    parser.add_argument("--keep", action="store_true", help="keep the generated trace and cache in bench/out/ for reuse")
    args = parser.parse_args(argv)

    if not args.seed.is_file():
        print(f"seed trace not found: {args.seed} (the repository's tests/data holds it)", file=sys.stderr)
        return 2
    folder = OUT / f"trace-frontend-{args.events}"
    folder.mkdir(parents=True, exist_ok=True)
    server: Optional[Server] = None
    try:
        generate(args.events, args.seed, folder)
        cache_dir = folder / "cache"
        cache_dir.mkdir(exist_ok=True)
        server = start_tensorboard(folder / "logdir", cache_dir, folder / "tensorboard.log")
        tracks = wait_until_loaded(server, args.load_timeout)
        bench_slices(server, tracks, args.repeat, args.windows, args.random_seed)
        if not args.no_browser:
            bench_frames(server, args.frames_seconds, args.load_timeout)
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
