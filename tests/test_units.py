import re

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


@pytest.mark.parametrize("exponent", range(-60, 61, 1))
def test_no_format_prints_a_long_string_of_digits(exponent):
    """Issue 48: a note printed '0.0000000000000000000000000000000000000000157–6359999999999999985272673105858114'.
    Whatever the magnitude, every format is short: sig3 counts in M…E past a million, says 1/N below 0.0001 and
    a power of ten past 10²¹."""
    from mountbench.units import sig3

    value = 1.5734 * 10.0**exponent
    for found in (sig3(value), format_count(value), format_bytes(value), format_rate(value), format_seconds(value)):
        assert len(found) <= 16 and not re.search(r"\d{8}", found), found
        assert "e+" not in found and "e-" not in found, found


def test_sig3_keeps_its_plain_digits_in_between():
    from mountbench.units import sig3

    assert [sig3(v) for v in (0.000391, 0.0391, 6.2, 1243.0, 125_000.0)] == ["0.000391", "0.0391", "6.20", "1240",
                                                                                  "125000"]  # fmt: skip
    assert [sig3(v) for v in (999_990.0, 59_000_000.0, 1.69e-8, 6.36e36)] == ["1.00M", "59.0M", "1/59.2M",
                                                                              "6.36×10³⁶"]  # fmt: skip
