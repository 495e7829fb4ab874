"""The pure parts of the http kind: nginx's generated config, wrk's script, argv and output,
and how presets define http workloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from mountbench.errors import UsageError
from mountbench.kinds.base import Adjustments
from mountbench.kinds.engines.nginx import quote, render_config
from mountbench.kinds.engines.wrk import MARKER, parse_wrk, render_script, whole_seconds, wrk_argv
from mountbench.kinds.http import DEFAULT_FILES, KIND, file_names, http_workload

# wrk 4.1.0's output with the script's done() line, as recorded on this machine
DONE_LINE = (
    '{"duration_us": 1030452, "requests": 6441, "bytes": 645761758, "connect": 0, "read": 0, "write": 0, '
    '"status": 12, "timeout": 3, "lat_mean_us": 12740.253, "lat_p50_us": 590, "lat_p90_us": 44767, '
    '"lat_p99_us": 142325, "lat_max_us": 171760}'
)
WRK_OUTPUT = f"""Running 1s test @ http://127.0.0.1:18080/
  2 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    12.74ms   28.14ms 171.76ms   89.10%
    Req/Sec     3.65k     2.70k    8.49k    52.94%
  Latency Distribution
     50%  590.00us
     75%    8.27ms
     90%   44.77ms
     99%  142.32ms
  6441 requests in 1.03s, 615.85MB read
Requests/sec:   6250.66
Transfer/sec:    597.65MB
{MARKER} {DONE_LINE}
"""


def test_config_listens_on_loopback_only_and_keeps_files_in_the_workdir(tmp_path: Path) -> None:
    text = render_config(Path('/mnt/my "share"/www'), 43210, tmp_path, sendfile=False, workers=1, secret="Zk3")
    listens = [line.strip() for line in text.splitlines() if line.strip().startswith("listen")]
    assert listens == ["listen 127.0.0.1:43210;"]
    # files only under the run's secret prefix; any other path is a 404
    assert 'location /Zk3/ { alias "/mnt/my \\"share\\"/www/"; }' in text
    assert "location / { return 404; }" in text and "        root " not in text
    assert "sendfile off;" in text and "daemon off;" in text and "access_log off;" in text
    for line in text.splitlines():
        if "_path" in line or line.startswith(("pid", "error_log")):
            assert str(tmp_path) in line, line
    assert quote("a\\b") == '"a\\\\b"'


def test_wrk_figures_come_from_the_script_line_at_full_precision() -> None:
    result = parse_wrk(WRK_OUTPUT)
    assert result.requests == 6441 and result.bytes == 645761758
    assert result.failed == 15 and result.answered == 6429
    assert result.error_text() == "12 non-2xx/3xx, 3 timeout"
    metrics = result.metrics()
    assert metrics["http.requests_per_s"] == pytest.approx(6441 / 1.030452)
    assert metrics["http.bw"] == pytest.approx(645761758 / 1.030452)
    assert metrics["http.lat_p50"] == pytest.approx(590e-6) and metrics["http.lat_p99"] == pytest.approx(0.142325)
    assert metrics["http.errors"] == 15 and metrics["http.bytes"] == 645761758
    with pytest.raises(ValueError, match="no summary"):
        parse_wrk("Running 1s test @ http://127.0.0.1:1/\n")


def test_wrk_script_and_argv() -> None:
    script = render_script(["/01-32k.bin", "/02-64k.bin"])
    assert 'local paths = {"/01-32k.bin", "/02-64k.bin"}' in script and "done = function" in script
    argv = wrk_argv("wrk", "http://127.0.0.1:1/", "/w/s.lua", threads=2, connections=16, duration_s=0.3)
    assert argv[argv.index("-d") + 1] == "1s" and "--latency" in argv  # wrk takes whole seconds only
    assert [whole_seconds(x) for x in (0.2, 1.0, 1.01, 10)] == [1, 1, 2, 10]


def test_http_workloads_from_presets_are_checked_and_described() -> None:
    workload = KIND.from_preset("s1", {"http": {"duration": 3}}, {"kind": "http", "name": "h", "sendfile": False})
    assert workload.spec["files"] == list(DEFAULT_FILES) and workload.spec["duration"] == 3
    assert workload.description.space_bytes == 1023 * 32 * 1024  # 32 KiB + 64 KiB + ... + 16 MiB
    assert workload.description.headline[0] == "http.requests_per_s"
    assert "sendfile=off" in workload.description.summary
    assert file_names([32 * 1024, 16 * 1024 * 1024, 1000]) == ["01-32k.bin", "02-16m.bin", "03-1000.bin"]
    shorter = KIND.adjust(workload, Adjustments(runtime=0.4))
    assert shorter.spec["duration"] == 1 and shorter.description.duration_bound_s == 3.0
    for bad, message in (
        ({"files": ["tiny"]}, "http workload x"),
        ({"threads": 4, "connections": 2}, "one connection per thread"),
        ({"duration": 0}, "duration must be"),
        ({"port": 80}, "unknown setting"),
    ):
        with pytest.raises(UsageError, match=message):
            http_workload("x", "x", "preset:test", bad)
