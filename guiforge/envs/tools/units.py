"""Unit conversion: length, mass, volume, data size (linear factors) and temperature."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolError, tool

# factor = how many base units (m, kg, L, byte) one unit is
LENGTH = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048,
          "yd": 0.9144, "mi": 1609.344, "nmi": 1852.0}
MASS = {"mg": 1e-6, "g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125,
        "lb": 0.45359237, "st": 6.35029318}
VOLUME = {"ml": 0.001, "cl": 0.01, "l": 1.0, "m3": 1000.0, "tsp": 0.00492892159375,
          "tbsp": 0.01478676478125, "floz": 0.0295735295625, "cup": 0.2365882365,
          "pt": 0.473176473, "qt": 0.946352946, "gal": 3.785411784, "imp_gal": 4.54609}
DATA = {"bit": 0.125, "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
        "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3, "TiB": 1024.0**4}
TEMPERATURE = ("C", "F", "K")
DIMENSIONS: dict[str, dict[str, float]] = {"length": LENGTH, "mass": MASS, "volume": VOLUME,
                                           "data_size": DATA}

LengthUnit = Literal["mm", "cm", "m", "km", "in", "ft", "yd", "mi", "nmi"]
MassUnit = Literal["mg", "g", "kg", "t", "oz", "lb", "st"]
VolumeUnit = Literal["ml", "cl", "l", "m3", "tsp", "tbsp", "floz", "cup", "pt", "qt", "gal", "imp_gal"]
DataUnit = Literal["bit", "B", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB"]
TemperatureUnit = Literal["C", "F", "K"]


class Converted(BaseModel):
    value: float
    from_unit: str
    to_unit: str
    result: float
    dimension: str


def _linear(dimension: str, value: float, src: str, dst: str) -> Converted:
    table = DIMENSIONS[dimension]
    result = value * table[src] / table[dst]
    return Converted(value=value, from_unit=src, to_unit=dst, result=float(f"{result:.10g}"),
                     dimension=dimension)


def _temperature(value: float, src: str, dst: str) -> Converted:
    kelvin = {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[src]
    if kelvin < 0:
        raise ToolError(f"{value} {src} is below absolute zero")
    result = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[dst]
    return Converted(value=value, from_unit=src, to_unit=dst, result=round(result, 6),
                     dimension="temperature")


@tool("conversion")
def convert_length(ctx: ToolContext, value: float, from_unit: LengthUnit, to_unit: LengthUnit) -> Converted:
    """Convert a length or distance (metres, kilometres, miles, feet, inches...).

    Args:
        value: the quantity to convert
        from_unit: unit of value
        to_unit: unit wanted
    """
    return _linear("length", value, from_unit, to_unit)


@tool("conversion")
def convert_mass(ctx: ToolContext, value: float, from_unit: MassUnit, to_unit: MassUnit) -> Converted:
    """Convert a mass or weight (grams, kilograms, pounds, ounces, stones, tonnes).

    Args:
        value: the quantity to convert
        from_unit: unit of value
        to_unit: unit wanted
    """
    return _linear("mass", value, from_unit, to_unit)


@tool("conversion")
def convert_volume(ctx: ToolContext, value: float, from_unit: VolumeUnit, to_unit: VolumeUnit) -> Converted:
    """Convert a volume or capacity of liquid (litres, millilitres, gallons, cups, fluid ounces).

    Args:
        value: the quantity to convert
        from_unit: unit of value (gal is the US gallon, imp_gal the imperial one)
        to_unit: unit wanted
    """
    return _linear("volume", value, from_unit, to_unit)


@tool("conversion")
def convert_temperature(ctx: ToolContext, value: float, from_unit: TemperatureUnit,
                        to_unit: TemperatureUnit) -> Converted:
    """Convert a temperature between Celsius, Fahrenheit and Kelvin.

    Args:
        value: the temperature to convert
        from_unit: C, F or K
        to_unit: C, F or K
    """
    return _temperature(value, from_unit, to_unit)


@tool("conversion")
def convert_data_size(ctx: ToolContext, value: float, from_unit: DataUnit, to_unit: DataUnit) -> Converted:
    """Convert a data or file size: bytes, KB/MB/GB (decimal, 1000) and KiB/MiB/GiB (binary, 1024).

    Args:
        value: the quantity to convert
        from_unit: unit of value
        to_unit: unit wanted
    """
    return _linear("data_size", value, from_unit, to_unit)


@tool("conversion")
def convert_units(ctx: ToolContext, value: float, from_unit: str, to_unit: str) -> Converted:
    """Convert any supported measurement when you do not know its dimension; the unit names
    decide (length, mass, volume, temperature or data size).

    Args:
        value: the quantity to convert
        from_unit: unit symbol such as km, lb, gal, F, MiB
        to_unit: unit symbol of the same dimension
    """
    if from_unit in TEMPERATURE and to_unit in TEMPERATURE:
        return _temperature(value, from_unit, to_unit)
    for dimension, table in DIMENSIONS.items():
        if from_unit in table and to_unit in table:
            return _linear(dimension, value, from_unit, to_unit)
    known = {d: sorted(t) for d, t in DIMENSIONS.items()} | {"temperature": list(TEMPERATURE)}
    raise ToolError(f"cannot convert {from_unit!r} to {to_unit!r}: both must be units of one "
                    f"dimension: {known}")
