"""Only the package list lives here: setuptools' declarative config cannot combine
automatic discovery with the top-level folders mapped under the guiforge namespace."""

from setuptools import find_packages, setup

MAPPED = {"guiforge.flows": "flows", "guiforge.schemas": "schemas", "guiforge.preparers": "preparers"}

setup(packages=find_packages(include=["guiforge", "guiforge.*"]) + list(MAPPED), package_dir={"guiforge": "guiforge", **MAPPED})
