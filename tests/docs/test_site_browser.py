"""The built site, opened in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``; ``make docs-browser`` installs them) loads the home page, an operator page with
its marble diagrams and the Performance page from a local HTTP server, and the pages must render
without a console error (a failed resource load is one) and with their SVGs drawn.

Chromium is driven through chromedriver's WebDriver HTTP API with the standard library only."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
DRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium chromium-driver, or make docs-browser)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _serve(root: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _WebDriver:
    """The few WebDriver calls the test needs, over chromedriver's HTTP API."""

    def __init__(self, base: str) -> None:
        self.base = base
        caps = {
            "capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": CHROMIUM,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--window-size=1280,1600"],
                },
                "goog:loggingPrefs": {"browser": "ALL"},
            }}
        }
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())["value"]

    def get(self, url: str) -> None:
        self._call("POST", f"/session/{self.session}/url", {"url": url})

    def run(self, script: str) -> Any:
        return self._call("POST", f"/session/{self.session}/execute/sync", {"script": script, "args": []})

    def run_async(self, script: str) -> Any:
        return self._call("POST", f"/session/{self.session}/execute/async", {"script": script, "args": []})

    def console(self) -> list[dict[str, Any]]:
        return list(self._call("POST", f"/session/{self.session}/se/log", {"type": "browser"}))

    def quit(self) -> None:
        with contextlib.suppress(Exception):
            self._call("DELETE", f"/session/{self.session}")


@pytest.fixture(scope="module")
def browser() -> Iterator[_WebDriver]:
    port = _free_port()
    proc = subprocess.Popen([str(DRIVER), f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/status", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("chromedriver did not start within 30 s")
                time.sleep(0.2)
        wd = _WebDriver(base)
        yield wd
        wd.quit()
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    with _serve(built_site) as url:
        yield url


# waits for the page's load event, then reports the images whose src matches and whether each drew
_IMAGES = """
const done = arguments[arguments.length - 1];
const report = () => {
  const imgs = [...document.querySelectorAll('img')].filter(i => i.getAttribute('src').includes('%s'));
  Promise.all(imgs.map(i => { i.loading = 'eager'; return i.decode().then(() => true, () => false); }))
    .then(ok => done({title: document.title, count: imgs.length,
                      drawn: imgs.filter((i, k) => ok[k] && i.naturalWidth > 0).length,
                      text: document.body.innerText.length}));
};
if (document.readyState === 'complete') report(); else window.addEventListener('load', report);
"""


def _open(browser: _WebDriver, url: str, images: str) -> dict[str, Any]:
    browser.console()  # drop what earlier pages logged
    browser.get(url)
    result: dict[str, Any] = browser.run_async(_IMAGES % images)
    time.sleep(0.3)  # late console messages (search index worker)
    errors = [e for e in browser.console() if e.get("level") == "SEVERE"]
    assert not errors, f"console errors on {url}: {errors}"
    return result


def test_the_home_page_renders_without_console_errors(browser: _WebDriver, site_url: str) -> None:
    r = _open(browser, f"{site_url}/index.html", "marbles/")
    assert r["title"].startswith("rstreams") and r["text"] > 500


def test_an_operator_page_draws_its_marble_diagrams(browser: _WebDriver, site_url: str) -> None:
    r = _open(browser, f"{site_url}/reference/operators/transforming.html", "marbles/")
    assert r["count"] >= 10, r
    assert r["drawn"] == r["count"], f"marble SVGs not drawn: {r}"


def test_the_performance_page_draws_its_charts(browser: _WebDriver, site_url: str) -> None:
    r = _open(browser, f"{site_url}/performance.html", "perf/")
    assert r["count"] >= 1 and r["drawn"] == r["count"], r


def test_a_missing_image_is_reported_as_a_console_error(browser: _WebDriver, site_url: str, built_site: Path) -> None:
    (built_site / "broken.html").write_text('<html><body><img src="nowhere.svg"></body></html>')
    browser.console()
    browser.get(f"{site_url}/broken.html")
    time.sleep(0.5)
    assert any(e.get("level") == "SEVERE" for e in browser.console()), "the console check would miss a broken image"
