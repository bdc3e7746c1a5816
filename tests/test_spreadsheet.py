"""The CSV downloads (`arena report`'s results.csv and standings.csv, `arena season
export`) hold names bots' authors chose: none is written as a spreadsheet formula."""

from __future__ import annotations

import csv
import io

import pytest

from arena.cli.season import export_csv
from arena.report.downloads import csv_rows as report_csv
from arena.spreadsheet import safe_cell


@pytest.mark.parametrize(("value", "written"), [
    ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
    ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
    ("+1+1", "'+1+1"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("greedy", "greedy"),
    ("a=b", "a=b"),
    ("", ""),
    ("1\N{EN DASH}3", "1\N{EN DASH}3"),  # a shared rank
    (-3, -3),  # numbers as they are: a negative score or strength
    (-2.5, -2.5),
    (None, None),
    (False, False),
])
def test_formula_text_is_quoted_and_nothing_else(value: object, written: object) -> None:
    assert safe_cell(value) == written


def test_both_csv_writers_quote_formulas_and_keep_numbers() -> None:
    report = report_csv([{"bot": "=1+1", "version": "-x", "score": -3, "strength": -0.5}])
    assert list(csv.reader(io.StringIO(report.decode()))) == [
        ["bot", "version", "score", "strength"], ["'=1+1", "'-x", "-3", "-0.5"]]
    export = export_csv([["bot", "score"], ["@evil", -3], ["fine", 4]])
    assert list(csv.reader(io.StringIO(export))) == [
        ["bot", "score"], ["'@evil", "-3"], ["fine", "4"]]
