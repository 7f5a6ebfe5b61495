"""Card and world templates render inside a time and size budget: a model-written card
that computes a huge number, builds a huge string or loops for ever fails as a template
error at once, and ordinary templates render as before."""

from __future__ import annotations

import pytest
from jinja2 import TemplateError

from guiforge.skills.templating import evaluate, render_text, render_value
from guiforge.worlds.jinja_budget import budget
from guiforge.worlds.render import TemplateError as WorldTemplateError
from guiforge.worlds.render import renderer

EXPENSIVE = [
    "{{ 9**(9**9) }}",  # minutes in one C call before
    "{{ 'a' * 10**8 }}",  # 100 MB before
    "{{ [0] * 10**8 }}",
    "{{ (2**40000) * (2**40000) }}",
    "{{ '%999999999d' % 1 }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{{ 'a'|center(10**9) }}",
    "{{ 'a'.ljust(10**9) }}",
    "{{ 'x\\tx'.expandtabs(10**7) }}",
    "{{ ('a' * 1000)|replace('a', 'a' * 10000) }}",
    "{{ ('a' * 1000).replace('a', 'a' * 10000) }}",
    "{{ ('\\n' * 100000)|indent(10000) }}",
    "{{ ','.join(['a' * 1000] * 1000) }}",
    "{{ [1]|batch(10**9, 0)|list }}",
    "{% set ns = namespace(s='a' * 1000) %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "{% for a in range(100000) %}{{ 'y' * 100 }}{% endfor %}",  # the output cap
]


@pytest.mark.parametrize("template", EXPENSIVE)
def test_card_templates_stop_at_the_budget(template):
    with pytest.raises(TemplateError, match="budget|loops ran over"):
        render_text(template, {})
    with pytest.raises(TemplateError, match="budget|loops ran over"):
        render_value({"setup": [template]}, {})


@pytest.mark.parametrize("template", EXPENSIVE)
def test_world_templates_stop_at_the_budget(template):
    r = renderer()
    with pytest.raises(WorldTemplateError, match="budget|loops ran over"):
        r.text(template, r.context({}))


def test_expressions_stop_at_the_budget():
    with pytest.raises(TemplateError, match="budget"):
        evaluate("9 ** (9 ** 9)", {})
    with pytest.raises(TemplateError, match="budget"):
        evaluate("'a' * n", {"n": 10**8})


def test_the_time_budget_ends_a_loop_that_outputs_nothing():
    """A deadline already past (0 s) makes the first loop item fail: the check is there."""
    with budget(0.0), pytest.raises(TemplateError, match="time budget"):
        render_text("{% for a in range(10) %}{% endfor %}", {})
    with budget(0.0), pytest.raises(TemplateError, match="time budget"):
        evaluate("items|map('string')|join", {"items": [1, 2]})


def test_lipsum_is_gone():
    with pytest.raises(TemplateError):
        render_text("{{ lipsum(10**6) }}", {})


def test_ordinary_templates_render_as_before():
    text = ("{{ 'ab' * 3 }} {{ 2 ** 10 }} {{ '%5.2f' % 3.14159 }} {{ '{:>4}'.format('x') }} "
            "{{ ['a', 'b']|join(', ') }} {{ 'a' ~ 'b' }} {% for i in range(3) %}{{ i }}{% endfor %} "
            "{{ 'x'|center(5) }}|{{ 'a-b'|replace('-', '+') }}")
    assert render_text(text, {}) == "ababab 1024  3.14    x a, b ab 012   x  |a+b"
    assert evaluate("items|map('string')|join('-')", {"items": [1, 2, 3]}) == "1-2-3"
    assert render_value({"n": "{{ 6 * 7 }}", "s": ["{{ 'x' ~ 1 }}"]}, {}) == {"n": 42, "s": ["x1"]}
    r = renderer()
    assert r.native("{{ 2 * 21 }}", r.context({})) == 42
    assert r.text("{{ 'a' * 3 }}-{{ 10 % 4 }}", r.context({})) == "aaa-2"
