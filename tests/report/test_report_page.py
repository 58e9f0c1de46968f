"""The report of an hourly job after a catch-up, as on-call opens it: in Debian's headless chromium (`make chromium`)
through Playwright, offline, from its file.

The job's history is made for real, small: its sources arrive hour by hour; the first run catches six hours up in
one window, then each hour runs alone; one hour's run fails (a duplicated A row: the target identity check
refuses it; the row is restored away and the hour re-run), and one run is killed with `kill -9` while it holds the
lock, so that the next run takes it over. The page must keep the hourly points visible beside the catch-up, mark
the failed run and the takeover on the charts, keep its tick labels apart, and open with its health line.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_jobs import job_toml
from frames import frame
from processes import env
from pyspark.sql import SparkSession

from deltainc.cli.app import main
from deltainc.errors import DeltaincError
from deltainc.pipeline.controller.commands import run
from deltainc.pipeline.job.job_config import load_job
from deltainc.pipeline.state.store import read_state, state_paths
from deltainc.settings import Settings

pytestmark = pytest.mark.processes

REPO = Path(__file__).resolve().parents[2]
H0 = dt.datetime(2025, 3, 1, tzinfo=dt.timezone.utc)
CATCH_UP = 6  # hours caught up by the first run, in one window
HOURS = 9  # then hour by hour up to this one
FAILS, KILLED = 7, 8  # the hour whose run fails once, the hour whose run is killed
A_SCHEMA = "TrxId long, Amount double, RecDate timestamp"
B_SCHEMA = "SepaId long, TrxId long, Country string, RecDate timestamp"


def hour_rows(hour: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """An hour's arrivals: four A rows; B for two of them at once, for the third an hour later, none for the fourth
    (it times out after max_waiting_time hours)."""
    stamp = H0 + dt.timedelta(hours=hour)
    a = [(hour * 10 + i, float(i), stamp) for i in range(4)]
    b = [(hour * 100 + i, hour * 10 + i, "NL", stamp) for i in range(2)]
    if hour > 0:
        b.append((hour * 100 + 2, (hour - 1) * 10 + 2, "DE", stamp))
    return a, b


def arrive(spark: SparkSession, root: Path, *hours: int) -> None:
    """The hours' rows appended to A and B, one commit each."""
    a = [row for hour in hours for row in hour_rows(hour)[0]]
    b = [row for hour in hours for row in hour_rows(hour)[1]]
    frame(spark, a, A_SCHEMA).write.format("delta").mode("append").save(str(root / "a"))
    frame(spark, b, B_SCHEMA).write.format("delta").mode("append").save(str(root / "b"))


def kill_while_holding_the_lock(root: Path, job: Path) -> str:
    """Start `deltainc run` as a scheduler would and `kill -9` its process group once its lock row is written."""
    paths = state_paths(str(root / "state"))
    before = read_state(paths, "trx").holder
    command = [sys.executable, "-m", "deltainc", "run", str(job)]
    process = subprocess.Popen(command, cwd=root, env=env(root), start_new_session=True, stderr=subprocess.PIPE)
    try:
        while (holder := read_state(paths, "trx").holder) is None or holder == before:
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    return holder.run_id


@pytest.fixture(scope="module")
def hourly(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hourly job's folder once its history is made: its job file, sources, target and state."""
    root = tmp_path_factory.mktemp("hourly_report")
    job = root / "trx.toml"
    text = job_toml("trx", str(root / "a"), str(root / "b"), str(root / "t"), H0.date(), state=str(root / "state"))
    job.write_text(text.replace('how = "left"', 'how = "left"\ntime_uom = "hour"'))
    settings = Settings(state_dir=root / "state")
    arrive(spark, root, *range(CATCH_UP))
    run(load_job(job), spark=spark, settings=settings)  # the catch-up: one window of six hours
    for hour in range(CATCH_UP, HOURS):
        arrive(spark, root, hour)
        if hour == FAILS:
            a = str(root / "a")
            good = spark.sql(f"DESCRIBE HISTORY delta.`{a}` LIMIT 1").first()["version"]  # type: ignore[index]
            frame(spark, hour_rows(hour)[0][:1], A_SCHEMA).write.format("delta").mode("append").save(a)
            with pytest.raises(DeltaincError, match="is not unique"):
                run(load_job(job), spark=spark, settings=settings)
            spark.sql(f"RESTORE TABLE delta.`{a}` TO VERSION AS OF {good}")
        if hour == KILLED:
            kill_while_holding_the_lock(root, job)
        run(load_job(job), spark=spark, settings=settings)
    return root


def page_data(page: Path) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="deltainc-report">(.*?)</script>', page.read_text(), re.S)
    assert found is not None
    return dict(json.loads(found.group(1).replace("<\\/", "</")))


def opened(page: Path, screenshot: Path) -> dict[str, Any]:
    """What chromium shows of the page: per chart its x tick labels' boxes and its marks' hover texts; requests and
    errors; a full-page screenshot."""
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    problems: list[str] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium")
        try:
            tab = browser.new_context(offline=True).new_page()
            tab.on("request", lambda request: requests.append(request.url))
            tab.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            tab.on("pageerror", lambda error: problems.append(str(error)))
            tab.goto(page.as_uri())
            charts = {}
            for chart in tab.locator("svg.chart").all():
                key = chart.get_attribute("data-chart")
                box = chart.bounding_box()
                ticks = [t.bounding_box() for t in chart.locator("text.tick.x").all()]
                marks = [m.locator("title").text_content() for m in chart.locator("g.mark").all()]
                charts[key] = {"box": box, "ticks": ticks, "marks": marks}
            first = tab.locator("body > p").first.inner_text()
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return {"charts": charts, "first": first, "requests": requests, "problems": problems}


def test_an_hourly_jobs_report_after_a_catch_up_in_chromium(
    spark: SparkSession, hourly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = hourly / "trx-report.html"
    assert main(["report", str(hourly / "trx.toml"), "--out", str(page)]) == 0
    capsys.readouterr()
    shown = opened(page, REPO / "build" / "report-test" / "report-hourly.png")
    assert shown["problems"] == [] and shown["requests"] == [page.as_uri()]
    data = page_data(page)
    charts = data["charts"]
    log = [r.asDict() for r in spark.read.format("delta").load(str(hourly / "state" / "runs")).collect()]
    failed = [r for r in log if r["status"] == "failed"]
    took_over = [r for r in log if r["took_over"]]
    assert len(failed) == 1 and len(took_over) == 1, log
    hours = [(H0 + dt.timedelta(hours=h)).replace(tzinfo=None).isoformat() for h in range(HOURS)]

    # The catch-up is drawn hour by hour, each hour's final rows as the target holds them.
    assert charts["outcomes"]["x"] == hours
    target = spark.read.format("delta").load(str(hourly / "t")).where("IsFinal")
    for hour in hours[:CATCH_UP]:
        held = target.where(f"date_trunc('HOUR', RecDate) = TIMESTAMP '{hour}'").count()
        drawn = sum(values[hours.index(hour)] for values in charts["outcomes"]["series"].values())
        assert drawn == held, hour
    # Beside the catch-up, the hourly windows are not drawn flat: the tallest of them is at least half the chart.
    for key in ("outcomes", "late", "files", "bytes"):
        chart = charts[key]
        totals = [sum(v or 0 for v in point) for point in zip(*chart["series"].values(), strict=True)]
        hourly_points = [t for x, t in zip(chart["x"], totals, strict=True) if x in hours[CATCH_UP:]]
        assert max(hourly_points) >= max(totals) / 2 > 0, (key, chart)

    # The failed run and the takeover are marked on the charts, at the windows they worked on.
    expected = {f"{failed[0]['window_start']}: failed", f"{took_over[0]['window_start']}: took over"}
    for key in ("outcomes", "backlog", "late", "files", "bytes"):
        assert set(shown["charts"][key]["marks"]) == expected, key
    assert len(shown["charts"]["durations"]["marks"]) == 2

    # No two tick labels of a chart overlap, and each stays inside its chart.
    for key, chart in shown["charts"].items():
        boxes = sorted((t["x"], t["x"] + t["width"]) for t in chart["ticks"])
        assert boxes, key
        assert all(right <= left for (_, right), (left, _) in zip(boxes, boxes[1:], strict=False)), (key, boxes)
        frame_box = chart["box"]
        assert frame_box["x"] <= boxes[0][0] and boxes[-1][1] <= frame_box["x"] + frame_box["width"], (key, boxes)

    # The page opens with its health line; the header says the target's own layout.
    assert shown["first"] == data["health"]
    assert f"1 failed, 1 took over in the last {len(log)} runs" in data["health"]
    columns = spark.sql(f"DESCRIBE DETAIL delta.`{hourly / 't'}`").first()["partitionColumns"]  # type: ignore[index]
    assert f'<th>layout</th><td class="text">partitioned by {", ".join(columns)} ' in page.read_text()
