"""The report in a real browser: Debian's headless Chromium opens the
fixture report, draws every chart without a JavaScript error, and the page
requests nothing beyond its own file (Chromium's net log, filtered to the
page's own requests; the browser's own update checks are not the page's).
A broken copy of the page shows that both checks can fail.

`make test` installs `chromium`; without it these tests fail, they do not skip.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from v6bench.report import build

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--no-pings",
         "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing leaves the machine, whatever is asked for
         "--virtual-time-budget=5000"]


def _chromium() -> str:
    exe = shutil.which("chromium")
    assert exe, "chromium is not installed (make test installs Debian's chromium package)"
    return exe


def open_page(page: Path, tmp: Path) -> tuple[str, list[str]]:
    """(DOM after the scripts ran, URLs the page itself requested)."""
    netlog = tmp / f"{page.stem}-netlog.json"
    r = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={tmp / 'profile'}", f"--log-net-log={netlog}", "--dump-dom",
                        page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    events = json.loads(netlog.read_text())["events"]
    page_urls = [e["params"]["url"] for e in events
                 if "url" in e.get("params", {}) and "file://" in str(e["params"].get("network_isolation_key", ""))]
    return r.stdout, [u for u in page_urls if not u.startswith(("file:", "data:", "blob:"))]


@pytest.fixture(scope="module")
def report(report_fixture, tmp_path_factory) -> Path:
    s, run_id = report_fixture
    return build.write(s, run_id, tmp_path_factory.mktemp("browser") / "out", figures=False)["html"]


def _errors(dom: str) -> str:
    m = re.search(r'<pre id="report-errors">([^<]*)</pre>', dom)
    assert m, "the page lost its error box"
    return m.group(1)


def test_every_chart_draws_without_javascript_errors_and_nothing_is_fetched(report, tmp_path):
    dom, urls = open_page(report, tmp_path)
    charts = report.read_text().count('class="chart"')
    assert charts >= 15
    assert f'data-charts-drawn="{charts}"' in dom
    assert _errors(dom) == ""
    assert dom.count("<svg") >= charts
    assert urls == []


def test_a_broken_page_is_caught(report, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(report.read_text().replace(
        "</body>", '<script>notDefinedAnywhere();</script><img src="https://example.invalid/x.png"></body>'))
    dom, urls = open_page(bad, tmp_path)
    assert "notDefinedAnywhere" in _errors(dom)
    assert urls == ["https://example.invalid/x.png"]
