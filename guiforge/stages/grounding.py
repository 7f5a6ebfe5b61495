"""grounding: grounding data from the screens guiforge renders. Each row is a screenshot
(stored once, by hash, in ``images``), a referring expression for one element (its text;
its role and position; what it does; what a user would ask), and the element's box and
centre; refusal rows name an element the screen does not show.

One shard per (domain, app): ``tasks_per_app`` gated tasks whose first app it is, each
rendered as ``screens_per_task`` screens (guiforge.grounding.screens) across themes,
viewports and distractors. Every box comes from the grounding scan and is emitted only
when the element is visible and ``document.elementFromPoint`` at its centre returns it or a
descendant; the others are counted per screen (``grounding_screens``).

Desktop tasks (domain ``desktop``, apps calc, writer, impress; ``desktop_tasks_per_app``
of them) give LibreOffice screens (guiforge.grounding.desktop): the document as the task
opens it, then with menus dropped; boxes are OCR lines that are read twice alike, say
words LibreOffice or the document has, and are hit by X's pointer query at their centre
and corners (Calc's cells also by a click); the others are counted the same way.
"""

from __future__ import annotations

import random

from pydantic import Field

from guiforge.envs.base import EnvFailure
from guiforge.faults import shard_faults
from guiforge.grounding.desktop import OFFICE_APPS, refusal_pools, render_desktop_task
from guiforge.grounding.expressions import role_word
from guiforge.grounding.rows import counts, refusal_pool, screen_rows
from guiforge.grounding.screens import render_task
from guiforge.lake.blobs import ShardContent
from guiforge.lake.fingerprint import fingerprint
from guiforge.stages.base import ShardPlan, Stage, StageConfig
from guiforge.stages.shared import env_manager, task_world, world_index


class GroundingConfig(StageConfig):
    domains: list[str] = Field(default=["web", "mobile", "desktop"], min_length=1,
                               description="the task domains whose screens are rendered (web pages: web, mobile; "
                                           "LibreOffice: desktop)")
    tasks_per_app: int = Field(default=6, ge=1, le=10_000, description="tasks rendered per (domain, app)")
    desktop_tasks_per_app: int = Field(default=3, ge=1, le=10_000,
                                       description="tasks rendered per desktop app (calc, writer, impress): a "
                                                   "LibreOffice screen costs ~1.5-3 s against a web page's ~0.5 s")
    desktop_cell_clicks: int = Field(default=8, ge=0, le=200,
                                     description="Calc cells clicked per document to confirm their box (a cell "
                                                 "not clicked is not emitted; ~0.5 s a click)")
    screens_per_task: int = Field(default=4, ge=1, le=64,
                                  description="screens per task: its start, then one press away each")
    refusals_per_screen: int = Field(default=3, ge=0, le=50,
                                     description="rows naming an element that is not on the screen")
    distractor_share: float = Field(default=0.35, ge=0, le=1,
                                    description="share of pressed screens with a distractor (cookie, dialog, toast)")
    phone_screenshots: str = Field(default="css", pattern="^(css|device)$",
                                   description="mobile frames in CSS pixels (cheap) or device pixels")
    instances_per_domain: int = Field(default=2, ge=1, le=16)


class GroundingStage(Stage):
    kind = "grounding"
    config_model = GroundingConfig
    code = ("guiforge.stages.grounding", "guiforge.stages.shared", "guiforge.grounding", "guiforge.envs",
            "guiforge.presentation", "guiforge.preparers", "guiforge.worlds", "guiforge.tasks")
    description = "grounding rows (screenshot, referring expression, hit-tested box) from rendered screens"
    config: GroundingConfig

    optional_inputs = ("worlds",)
    absent_inputs: frozenset[str] = frozenset()  # set by the compile step (compile_graph.py)

    def inputs(self) -> list[str]:
        return ["tasks", *(t for t in self.optional_inputs if t not in self.absent_inputs)]

    def outputs(self) -> list[str]:
        return ["grounding", "grounding_screens", "images"]

    def reads(self) -> dict[str, list[str]]:
        return {"tasks": ["task_id", "domain", "apps"]}

    def plan(self, ctx) -> list[ShardPlan]:
        shards = ctx.input_shards("tasks")
        groups: dict[tuple[str, str], list[list[str]]] = {}
        for s in shards:
            t = ctx.lake.read_shard(s.path, columns=["task_id", "domain", "apps"])
            for task_id, domain, apps in zip(*(t.column(c).to_pylist() for c in ("task_id", "domain", "apps")),
                                             strict=True):
                if domain in self.config.domains and apps and (domain != "desktop" or apps[0] in OFFICE_APPS):
                    groups.setdefault((domain, apps[0]), []).append([task_id, s.path])
        inputs = [s.fingerprint for s in shards]
        plans = []
        for (domain, app), rows in sorted(groups.items()):
            rows.sort()
            random.Random(fingerprint(["grounding-tasks", ctx.seed, domain, app])).shuffle(rows)
            n = self.config.desktop_tasks_per_app if domain == "desktop" else self.config.tasks_per_app
            plans.append(ShardPlan(key=f"grounding[{domain}:{app}]",
                                   params={"domain": domain, "app": app, "tasks": rows[:n],
                                           "domains": [domain]},
                                   inputs=inputs))
        return plans

    def run(self, ctx, shard: ShardPlan):
        images = ShardContent(ctx.content_store("images"))
        try:
            with shard_faults(ctx, self.name, shard.key):
                return self._run(ctx, shard, images)
        except BaseException:
            images.abandon()  # claimed frames were never committed: let other shards store them
            raise

    def _run(self, ctx, shard: ShardPlan, images: ShardContent) -> dict:
        # heavy: faker, jinja2 (worlds, preparers), imported when this runs
        from guiforge.gates.package_gate import env_spec
        from guiforge.tasks.materialize import task_spec

        cfg = self.config
        manager = env_manager(ctx, cfg.instances_per_domain)
        worlds = world_index(ctx)
        kind = ctx.pipeline.kinds().kind(shard.params["domain"])
        cache: dict[str, dict] = {}
        screens = []
        for task_id, path in shard.params["tasks"]:
            if path not in cache:
                cache[path] = {r["task_id"]: r for r in ctx.lake.read_shard(path).to_pylist()}
            row = cache[path][task_id]
            spec = task_spec(row, task_world(worlds, row), kind)
            desktop = row["domain"] == "desktop"
            # the desktop's screens need no shell: its gui variant
            variant = "gui" if desktop else row.get("variant")
            lease = manager.acquire(env_spec(row["domain"], variant, cfg.phone_screenshots, None, kind), timeout_s=600)
            try:
                if desktop:
                    screens += render_desktop_task(lease, spec, cfg.screens_per_task, str(ctx.seed),
                                                   cfg.desktop_cell_clicks)
                else:
                    screens += render_task(lease, spec, cfg.screens_per_task, str(ctx.seed), cfg.distractor_share,
                                           kind.touch, role_word)
            except EnvFailure:
                pass  # a broken instance: this task's screens are left out, the next lease gets a fresh one
            finally:
                lease.release()
        pool = refusal_pool(screens)
        # the desktop's refusals name menu items of menus not dropped on the screen
        pools = refusal_pools(screens) if shard.params["domain"] == "desktop" else {}
        rows, screen_rows_out = [], []
        seen: set[str] = set()
        for screen in screens:
            sha = images.add_image(screen.image, screen.image_format)[0]
            mine = [r for r in screen_rows(screen, pools.get(screen.screen_id, pool), cfg.refusals_per_screen,
                                           kind.touch, str(ctx.seed))
                    if r["grounding_id"] not in seen]
            for r in mine:
                seen.add(r["grounding_id"])
                r["image_sha256"] = sha
            rows += mine
            screen_rows_out.append({
                "screen_id": screen.screen_id, "task_id": screen.task_id, "domain": screen.domain, "app": screen.app,
                "route": screen.route, "via": screen.via, "theme": screen.theme,
                "viewport": list(screen.look.viewport) if screen.look.viewport else None,
                "distractors": screen.distractor_kinds, "image_sha256": sha, **counts(screen),
                "n_rows": sum(not r["refusal"] for r in mine), "n_refusals": sum(r["refusal"] for r in mine),
                "render_s": round(screen.render_s, 4)})
        return {"grounding": rows, "grounding_screens": screen_rows_out, "images": images.rows}

