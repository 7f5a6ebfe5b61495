"""skills: the skill cards a run uses, validated and recorded in the lake, so every task
can be traced to the exact card text that made it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field

from guiforge.errors import GuiforgeError
from guiforge.lake.fingerprint import sha256_bytes
from guiforge.paths import PROJECT_ROOT, SKILLS_DIR
from guiforge.skills.card import SkillCard
from guiforge.stages.base import ShardPlan, Stage, StageConfig


class SkillsConfig(StageConfig):
    dir: str = Field(default="skills", description="folder of <app>/<skill>.yaml cards, relative to the project")
    include: list[str] | Literal["all"] = "all"
    exclude: list[str] = Field(default_factory=list)


def card_row(card: SkillCard, text: str, source: str, model: str | None = None, prompt_hash: str | None = None) -> dict:
    return {
        "skill_id": card.id, "version": card.version, "domains": list(card.domains), "apps": list(card.apps),
        "description": card.description, "difficulty": card.difficulty, "max_steps": card.max_steps,
        "card_yaml": text, "card_sha256": sha256_bytes(text.encode()), "cross_app": card.cross_app,
        "source": source, "author_model": model, "prompt_hash": prompt_hash,
    }


def cards_from_rows(rows: list[dict]) -> dict[str, SkillCard]:
    return {r["skill_id"]: SkillCard.model_validate(yaml.safe_load(r["card_yaml"])) for r in rows}


class SkillsStage(Stage):
    kind = "skills"
    config_model = SkillsConfig
    code = ("guiforge.stages.skills", "guiforge.skills", "guiforge.errors")
    description = "validated skill cards from skills/<app>/<skill>.yaml"
    config: SkillsConfig

    def preflight(self) -> None:
        # heavy: faker, jinja2, imported when this runs
        from guiforge.skills.loader import load_cards

        folder = self.folder()
        if not folder.is_dir():
            raise GuiforgeError(f"stages.{self.name}.dir: no folder {folder}; point it at skills/<app>/<skill>.yaml cards")
        cards = load_cards(folder)  # every card parses and names known checks
        for field in ("include", "exclude"):
            names = getattr(self.config, field)
            unknown = [] if names == "all" else sorted(set(names) - set(cards))
            if unknown:
                raise GuiforgeError(f"stages.{self.name}.{field}: no skill card {unknown} under {folder}; "
                                    "`guiforge skills list` shows the ids")

    def data_files(self) -> list[Path]:
        return sorted(self.folder().glob("*/*.yaml"))  # every card is loaded and checked

    def inputs(self) -> list[str]:
        return []

    def outputs(self) -> list[str]:
        return ["skills"]

    def folder(self) -> Path:
        path = Path(self.config.dir)
        if path == Path("skills"):
            return SKILLS_DIR
        return path if path.is_absolute() else PROJECT_ROOT / path

    def selected_files(self) -> list[Path]:
        files = sorted(self.folder().glob("*/*.yaml"))
        chosen = [f for f in files if self.config.include == "all" or f"{f.parent.name}.{f.stem}" in self.config.include]
        return [f for f in chosen if f"{f.parent.name}.{f.stem}" not in self.config.exclude]

    def plan(self, ctx) -> list[ShardPlan]:
        # The selected cards' bytes are part of the shard's identity: editing one re-runs it.
        files = self.selected_files()
        digest = sha256_bytes(b"".join(f.read_bytes() for f in files))
        return [ShardPlan(key="skills", params={"cards": digest, "n": len(files)})]

    def run(self, ctx, shard: ShardPlan):
        # heavy: faker, jinja2, imported when this runs
        from guiforge.skills.loader import load_cards

        folder = self.folder()
        cards = load_cards(folder)
        wanted = set(cards) if self.config.include == "all" else set(self.config.include)
        unknown = wanted - set(cards)
        if unknown:
            raise GuiforgeError(f"stages.{self.name}.include: no skill card {sorted(unknown)} under {folder}")
        rows = []
        for skill_id in sorted(wanted - set(self.config.exclude)):
            app, name = skill_id.split(".", 1)
            text = (folder / app / f"{name}.yaml").read_text()
            rows.append(card_row(cards[skill_id], text, "disk"))
        return {"skills": rows}
