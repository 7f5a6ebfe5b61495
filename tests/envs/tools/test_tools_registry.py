"""The registry: coverage per area, generated schemas, argument validation, error results."""

from __future__ import annotations

import jsonschema
import pytest
from tools_helpers import run

from guiforge.envs.tools import REGISTRY, ToolContext, areas, call_tool
from guiforge.envs.tools.registry import parse_docstring, tool

EXPECTED_AREAS = {"images", "dates", "conversion", "world", "tables", "text"}


def test_at_least_40_tools_over_6_areas():
    per_area = {a: len(names) for a, names in areas().items()}
    assert set(per_area) >= EXPECTED_AREAS
    assert sum(per_area[a] for a in EXPECTED_AREAS) >= 40
    assert all(per_area[a] >= 5 for a in EXPECTED_AREAS), per_area
    assert {"search_tool", "coding_tool"} <= set(REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_schema_is_valid_json_schema_generated_from_hints(name):
    t = REGISTRY[name]
    schema = t.schema()
    assert schema["name"] == name and len(schema["description"]) > 20
    params = schema["parameters"]
    jsonschema.Draft202012Validator.check_schema(params)
    jsonschema.Draft202012Validator.check_schema(t.result_schema())
    assert params["type"] == "object" and params["additionalProperties"] is False
    # every parameter is described, and required ones are exactly those without defaults
    for pname, prop in params.get("properties", {}).items():
        assert prop.get("description"), f"{name}.{pname} has no description"
    required = {p for p, f in t.args_model.model_fields.items() if f.is_required()}
    assert set(params.get("required", [])) == required


def test_schema_types_follow_the_type_hints():
    crop = REGISTRY["crop_image"].schema()["parameters"]
    assert crop["properties"]["left"]["type"] == "integer"
    assert crop["properties"]["left"]["minimum"] == 0
    length = REGISTRY["convert_length"].schema()["parameters"]
    assert "mi" in length["properties"]["from_unit"]["enum"]
    add = REGISTRY["add_days"].schema()["parameters"]
    assert {"type": "string", "format": "date"} in add["properties"]["start"]["anyOf"]


def test_missing_wrong_type_and_unknown_parameters_are_one_error(ctx: ToolContext):
    r = run(ctx, "crop_image", image="img-1", left="abc", top=0, bottom=5, colour="red")
    assert not r.ok and r.value is None
    assert r.error.startswith("invalid arguments for crop_image:")
    assert "missing required parameter 'right'" in r.error
    assert "left: Input should be a valid integer" in r.error
    assert "unknown parameter 'colour'" in r.error
    assert "\n" not in r.error


def test_enum_and_range_violations(ctx: ToolContext):
    r = run(ctx, "convert_length", value=1, from_unit="furlong", to_unit="m")
    assert not r.ok and "from_unit" in r.error and "'furlong'" in r.error
    r = run(ctx, "zoom_image", image="img-1", x=-5, y=0)
    assert not r.ok and "x: Input should be greater than or equal to 0" in r.error


def test_arguments_must_be_an_object(ctx: ToolContext):
    r = call_tool(REGISTRY["today"], ctx, ["not", "a", "dict"])
    assert not r.ok and "must be a JSON object" in r.error


def test_a_crashing_tool_returns_an_error_result(ctx: ToolContext):
    def exploding(ctx: ToolContext, n: int) -> int:
        """Divide one by n.

        Args:
            n: the divisor
        """
        return 1 // n

    tool("test")(exploding)
    try:
        r = call_tool(REGISTRY["exploding"], ctx, {"n": 0})
        assert not r.ok and r.error == "exploding failed: ZeroDivisionError: integer division or modulo by zero"
        assert call_tool(REGISTRY["exploding"], ctx, {"n": 1}).value == 1
    finally:
        del REGISTRY["exploding"]


def test_undocumented_parameter_is_refused_at_registration():
    def sloppy(ctx: ToolContext, x: int) -> int:
        """Do something."""
        return x

    with pytest.raises(ValueError, match="parameter 'x' is not described"):
        tool("test")(sloppy)
    assert "sloppy" not in REGISTRY


def test_parse_docstring_joins_continuation_lines():
    desc, params = parse_docstring("""Line one
    continues.

    Args:
        a: first
            more about a
        b: second
    """)
    assert desc == "Line one continues."
    assert params == {"a": "first more about a", "b": "second"}


def test_summary_is_the_first_sentence():
    assert REGISTRY["day_of_week"].summary() == "day_of_week: The weekday name of a date (which day of the week, e.g. Tuesday)"
    assert REGISTRY["coding_tool"].summary().endswith("parsing, editing files")
