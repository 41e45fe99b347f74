"""The web app's replay in a real browser: how long a long game takes to open, how long a step takes, and
how much the app weighs.

Plays a Kiri-ai game of greedy bots with at least ``--events`` events (``bench.steps.long_kiri_ai``), serves
the real app over HTTP (werkzeug, threaded) on an embedded Redis, and drives Debian's Chromium (Playwright)
to ``/games/{id}?step=1``:

* load: from navigation until the table at step 1 is drawn with every step's view loaded
  (``GET /v1/games/{id}/steps``, pages of 1000);
* a step: ``--steps`` presses of the right arrow, each timed in the page from the key event until the
  table shows the next ``data-step`` (median and 95th percentile);
* a step per frame: ``--steps`` presses of the left arrow, one at the start of each animation frame (as a
  held key): the interval between frames, and the share of steps drawn without missing a frame (an interval
  under 1.5 frames of 16.7 ms);
* weight: the bytes of the app's own files (``/app/...``) as sent, and of the API answers the load used.

    python -m bench.web_replay
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import redis

from adapters.embedded_redis import EmbeddedRedis
from bench.steps import long_kiri_ai
from bootstrap import build
from entrypoints.api import create_app
from service.ports import NoScheduler

STEP_TIMER = """async (count) => {
  // Per right arrow: the page's work (the key to the table redrawn: a MutationObserver's callback runs once
  // the page's synchronous drawing is done) and until the next frame is painted (layout included).
  const work = [], painted = [];
  for (let i = 0; i < count; i++) {
    const table = document.querySelector('[data-step]');
    const before = Number(table.dataset.step);
    const drawn = new Promise((resolve) => {
      const seen = new MutationObserver(() => {
        if (Number(table.dataset.step) === before + 1) { seen.disconnect(); resolve(performance.now()); }
      });
      seen.observe(table, {attributes: true, attributeFilter: ['data-step']});
    });
    const start = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
    work.push((await drawn) - start);
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    painted.push(performance.now() - start);
  }
  return [work, painted];
}"""


FRAME_TIMER = """async (count) => {
  // One right arrow at the start of each animation frame, as a held key would: the interval between two
  // frames is the step's whole cost (script, style, layout, paint) when it is over a frame, else one frame.
  const table = document.querySelector('[data-step]');
  const intervals = [];
  let last = await new Promise((r) => requestAnimationFrame(r));
  for (let i = 0; i < count; i++) {
    const before = Number(table.dataset.step);
    document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft', bubbles: true}));
    await new Promise((resolve) => {
      const seen = new MutationObserver(() => { seen.disconnect(); resolve(); });
      seen.observe(table, {attributes: true, attributeFilter: ['data-step']});
      if (Number(table.dataset.step) !== before) { seen.disconnect(); resolve(); }
    });
    const now = await new Promise((r) => requestAnimationFrame(r));
    intervals.push(now - last);
    last = now;
  }
  return intervals;
}"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=1000, help="at least this many events in the game")
    p.add_argument("--steps", type=int, default=200, help="steps timed")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    from bench.browser import CHROMIUM_ARGS, chromium_path, served

    with tempfile.TemporaryDirectory() as folder:
        server = EmbeddedRedis(Path(folder), fsync="no").start()
        try:
            client = redis.Redis(port=server.port)
            game_id, events = long_kiri_ai(build(client, scheduler=NoScheduler()).games, args.events, args.events // 10)
            app = create_app({"REDIS_URL": server.url, "SCHEDULER": NoScheduler(), "FOLLOW_APPENDS": False})
            with served(app) as url, sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                started = time.perf_counter()
                page.goto(f"{url}/games/{game_id}?step=1")
                page.wait_for_selector("[data-step='1']", timeout=60_000)
                loaded = time.perf_counter() - started
                work, painted = (sorted(t) for t in page.evaluate(STEP_TIMER, min(args.steps, events - 1)))
                frames = sorted(page.evaluate(FRAME_TIMER, min(args.steps, events - 1)))
                sizes = page.evaluate(
                    "() => performance.getEntriesByType('resource').map(r => [r.name, r.encodedBodySize])"
                )
                browser.close()
        finally:
            server.stop()
    app_bytes = sum(size for name, size in sizes if "/app/" in name)
    api_bytes = sum(size for name, size in sizes if "/v1/" in name)
    print(f"game: Kiri-ai, {events} events")
    print(f"load (navigation to step 1 drawn, every step's view loaded): {loaded * 1000:.0f} ms")
    for what, times in (("the page's work", work), ("until painted", painted)):
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"a step, {what} ({len(times)} right arrows): median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms")
    on_time = sum(interval < 16.7 * 1.5 for interval in frames) / len(frames)
    p95 = frames[int(len(frames) * 0.95) - 1]
    print(
        f"a step per frame ({len(frames)} left arrows, one at each frame): frame interval median "
        f"{statistics.median(frames):.1f} ms, p95 {p95:.1f} ms; {on_time:.0%} of steps drawn within one frame"
    )
    print(f"the app's own files: {app_bytes / 1024:.1f} KB; the API answers of the load: {api_bytes / 1024:.0f} KB")


if __name__ == "__main__":
    main()
