"""Numbers as answers and documents write them: the checks' ``find_number``."""

from __future__ import annotations

import pytest

from guiforge.worlds.formats import find_number


@pytest.mark.parametrize("text,value", [
    ("I spent -123.45 in May", -123.45), ("net −€64.46", -64.46), ("(1,234.50)", -1234.5),
    ("(€ 12.00)", -12), ("−1.234,50 €", -1234.5), ("balance: (64.46 EUR)", -64.46),
    ("total 123.45", 123.45), ("1 234,50 zł", 1234.5),
])
def test_found(text, value):
    assert find_number(text, value)


@pytest.mark.parametrize("text,value", [
    ("total 123.45", -123.45),  # a negative figure written as positive is the wrong answer
    ("the 2024-05 report", -5), ("call 555-1234", -1234),  # hyphens inside a token are no sign
    ("1123.45", 123.45), ("-123.456", -123.45),
])
def test_not_found(text, value):
    assert not find_number(text, value)
