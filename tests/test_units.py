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
