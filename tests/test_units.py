import pytest

from mountbench.errors import UsageError
from mountbench.units import format_bytes, format_count, format_rate, format_seconds, parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4k", 4096),
        ("1M", 1 << 20),
        ("1000m", 1000 << 20),
        ("256MiB", 256 << 20),
        ("2G", 2 << 30),
        ("512", 512),
        ("1.5k", 1536),
    ],
)
def test_parse_size_uses_fio_binary_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "-1G", "1 X"])
def test_parse_size_rejects_garbage_with_a_fix(text):
    with pytest.raises(UsageError, match=r"e\.g\. 512M"):
        parse_size(text)


def test_formats_have_three_significant_figures():
    assert format_bytes(1536) == "1.50 KiB"
    assert format_rate(1.234e9) == "1.23 GB/s"
    assert format_rate(12.3e6) == "12.3 MB/s"
    assert format_count(12345) == "12.3k"
    assert format_count(950) == "950"
    assert format_seconds(850e-9) == "850 ns"
    assert format_seconds(0.00456) == "4.56 ms"
    assert format_seconds(2.1) == "2.10 s"
    assert format_seconds(3725) == "1h02m"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (999.4, "999"),
        (999.6, "1.00k"),  # rounded to 3 figures it reaches the next step: never "1000k"
        (999_700, "1.00M"),
        (4.56e9, "4.56G"),
        (7.89e12, "7.89T"),
        (2e17, "200P"),  # a chart axis once printed this as "200000000G"
        (-5e12, "-5.00T"),
        (0, "0"),
    ],
)
def test_format_count_steps_past_giga(value, expected):
    assert format_count(value) == expected


def test_rates_and_sizes_step_past_giga_and_round_up_a_step():
    assert format_rate(2e12) == "2.00 TB/s" and format_rate(3e15) == "3.00 PB/s"
    assert format_rate(999.7e6) == "1.00 GB/s" and format_rate(500) == "0.500 kB/s"
    assert format_bytes(1023.9 * 1024) == "1.00 MiB" and format_bytes(5 * 1024**5) == "5.00 PiB"
    assert format_bytes(3 * 1024**6) == "3.00 EiB"
