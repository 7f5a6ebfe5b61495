# The two commands a new user needs (each bootstraps apt packages and the venv first):
#   make run    run the default offline pipeline into data/lake
#   make test   lint (ruff, and the layer contract: scripts/lint_imports.py) and run the test suite
.PHONY: run test bootstrap lint stats

bootstrap:
	./scripts/bootstrap.sh

run: bootstrap
	.venv/bin/guiforge run

stats: bootstrap
	.venv/bin/guiforge stats

lint: bootstrap
	.venv/bin/ruff check .
	.venv/bin/python scripts/lint_imports.py

test:
	GUIFORGE_EXTRAS=test,ray ./scripts/bootstrap.sh
	.venv/bin/ruff check .
	.venv/bin/python scripts/lint_imports.py
	.venv/bin/pytest -q --durations=25
