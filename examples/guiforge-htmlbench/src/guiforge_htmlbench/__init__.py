"""guiforge-htmlbench: a unit-conversion benchmark served as HTML pages, plugged into guiforge
through its entry points (see this package's pyproject.toml and README.md)."""

UNITS = {  # (from, to) -> factor: to = from * factor
    ("km", "mi"): 0.621371,
    ("kg", "lb"): 2.20462,
    ("l", "gal"): 0.264172,
    ("m", "ft"): 3.28084,
}


def convert(amount: float, source: str, target: str) -> float:
    return round(amount * UNITS[(source, target)], 2)
