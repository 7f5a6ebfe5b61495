"""``ToolsEnv``: the tools domain. The agent calls typed tools by name with JSON arguments.

``task.setup``::

    {"world": <World JSON>,                         # optional: facts, contacts, events...
     "files": {"data/q1.csv": "a,b\\n1,2\\n",        # text
               "scan.png": {"base64": "..."},         # bytes
               "report.xlsx": {"copy_from": "report.xlsx"}},  # under files_root only
     "tools": ["read_table", "group_sum"],          # optional subset; search_tool is always in
     "coding_timeout_s": 15}

A step is ``Action(type="call_tool", text='{"name": ..., "arguments": {...}}')``; its
feedback is the tool's result as JSON (or the validation error). An image a tool produces is
the next observation's screenshot. ``answer`` / ``terminate`` end the episode.

``copy_from`` reads a host file only from the run's prepared-files root (``files_root``;
none by default, see :mod:`guiforge.envs.prepared`). The workspace is a
:class:`~guiforge.envs.sandbox.Workspace` with a quota, owned by the episode's sandbox user,
and ``coding_tool`` runs in the sandbox over it.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guiforge.envs.actions import Action
from guiforge.envs.base import Environment, EnvSpec, FinalState, Observation, StepResult, TaskSpec
from guiforge.envs.prepared import read_prepared
from guiforge.envs.sandbox import MiB, Sandbox, SandboxUser, Workspace
from guiforge.envs.tools.catalog import REGISTRY
from guiforge.envs.tools.coding import coding_sandbox
from guiforge.envs.tools.context import ToolContext
from guiforge.envs.tools.registry import ToolResult, call_tool
from guiforge.envs.tools.search import rank_tools
from guiforge.worlds.model import World

MAX_FEEDBACK_CHARS = 16_000
ALWAYS_AVAILABLE = ("search_tool",)
AREA_ORDER = ("world", "dates", "conversion", "tables", "text", "images", "meta")


class FileSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    base64: str | None = None
    copy_from: str | None = None


class ToolsSetup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    world: World | None = None
    files: dict[str, str | FileSource] = Field(default_factory=dict)
    tools: list[str] | None = None
    coding_timeout_s: float = Field(default=20.0, gt=0, le=25)


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ToolsEnv(Environment):
    domain = "tools"

    def __init__(self, spec: EnvSpec, *, files_root: Path | None = None, quota_bytes: int = 256 * MiB):
        super().__init__(spec)
        self.files_root = files_root  # where copy_from may read host files (None: nowhere)
        self.quota_bytes = quota_bytes
        self._root: Path | None = None
        self._user: SandboxUser | None = None
        self.workspace: Workspace | None = None
        self.sandbox: Sandbox | None = None
        self.task: TaskSpec | None = None
        self.ctx: ToolContext | None = None
        self.calls: list[dict[str, Any]] = []
        self._feedback = ""
        self._image: str | None = None
        self._done = False

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="guiforge-tools-"))
        self._root.chmod(0o755)  # the sandbox user must reach the workspace below
        try:
            self._user = SandboxUser.acquire()
            self.workspace = Workspace(self._root / "workspace", self._user, self.quota_bytes)
            self.sandbox = coding_sandbox(self.workspace)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.kill_all()
            self.sandbox = None
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None
        if self._user is not None:
            self._user.release()
            self._user = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def kill(self) -> None:
        self.close()

    def healthy(self) -> bool:
        return self.workspace is not None and self.workspace.path.is_dir()

    def reset(self, task: TaskSpec) -> Observation:
        if self.workspace is None:
            self.start()
        assert self.workspace is not None
        try:
            setup = ToolsSetup.model_validate(task.setup)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"task {task.task_id}: setup.{where}: {first['msg']}") from None
        if setup.tools is None:
            rank = {area: i for i, area in enumerate(AREA_ORDER)}
            names = sorted(REGISTRY, key=lambda n: rank.get(REGISTRY[n].area, len(rank)))
        else:
            names = list(dict.fromkeys([*ALWAYS_AVAILABLE, *setup.tools]))
        unknown = [n for n in names if n not in REGISTRY]
        if unknown:
            raise ValueError(f"task {task.task_id}: setup.tools names unknown tools {unknown}; "
                             f"see guiforge.envs.tools.REGISTRY")
        files = {rel: self._content(task.task_id, rel, source) for rel, source in setup.files.items()}
        self.workspace.populate(files)  # after every file was read: a bad spec changes nothing
        self.task = task
        self.ctx = ToolContext(workspace=self.workspace.path, world=setup.world,
                               available={n: REGISTRY[n] for n in names},
                               coding_timeout_s=setup.coding_timeout_s, sandbox=self.sandbox)
        self.calls, self._feedback, self._image, self._done = [], "", None, False
        self.answer = self.status = None
        return self.observe()

    def _content(self, task_id: str, rel: str, source: str | FileSource) -> bytes:
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
            raise ValueError(f"task {task_id}: setup.files[{rel!r}] points outside the workspace")
        if isinstance(source, str):
            return source.encode()
        if source.text is not None:
            return source.text.encode()
        if source.base64 is not None:
            return base64.b64decode(source.base64)
        if source.copy_from is not None:
            try:
                return read_prepared(self.files_root, rel, source.copy_from)
            except (ValueError, OSError) as exc:
                raise ValueError(f"task {task_id}: {exc}") from None
        raise ValueError(f"task {task_id}: setup.files[{rel!r}] needs text, base64 or copy_from")

    # -- observation -----------------------------------------------------------------------
    def schemas(self) -> list[dict[str, Any]]:
        """Full JSON schemas of the tools available in this episode (for native function calling)."""
        return [t.schema() for t in self._context().available.values()]

    def _context(self) -> ToolContext:
        if self.ctx is None:
            raise RuntimeError("ToolsEnv used before reset(task)")
        return self.ctx

    def observe(self) -> Observation:
        ctx = self._context()
        assert self.task is not None
        tools = "\n".join(f"- {t.summary()}" for t in ctx.available.values())
        files = sorted(p.relative_to(ctx.workspace).as_posix() for p in ctx.workspace.rglob("*")
                       if p.is_file() and not p.is_symlink())
        listed = ", ".join(files[:50]) + (f" (+{len(files) - 50} more)" if len(files) > 50 else "")
        text = (
            f"Task: {self.task.instruction}\n\n"
            'Tools (one call per step: {"name": <tool>, "arguments": {...}}; search_tool returns '
            "their parameter schemas):\n"
            f"{tools}\n\nWorkspace files: {listed or 'none'}"
        )
        obs = Observation(text=text, feedback=self._feedback)
        if self._image is not None:
            img = ctx.images[self._image]
            obs.screenshot, obs.width, obs.height = ctx.png(self._image), img.width, img.height
        obs.debug = {"calls": len(self.calls), "image_handle": self._image}
        return obs

    # -- actions ---------------------------------------------------------------------------
    def step(self, action: Action) -> StepResult:
        ctx = self._context()
        if self._done:
            return StepResult(self.observe(), error="the episode has ended; no more actions")
        try:
            action.check_domain("tools")
        except ValueError as exc:
            return self._reply(None, {}, ToolResult(ok=False, error=str(exc)))
        if action.type in ("answer", "terminate"):
            self._done = True
            self._feedback, self._image = "", None
            return self.finish(action)
        try:
            call = ToolCall.model_validate_json(action.text or "")
            args = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
        except (ValidationError, ValueError) as exc:
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            return self._reply(None, {}, ToolResult(ok=False, error=(
                'call_tool text must be JSON {"name": <tool>, "arguments": {...}}: ' + detail)))
        tool = ctx.available.get(call.name)
        if tool is None:
            near = [t.name for t, _ in rank_tools(call.name, 3, ctx.available)]
            return self._reply(call.name, args, ToolResult(ok=False, error=(
                f"no tool {call.name!r} in this task; similar: {', '.join(near) or 'none'}; "
                "search_tool finds tools")))
        return self._reply(call.name, args, call_tool(tool, ctx, args))

    def _reply(self, name: str | None, args: Any, result: ToolResult) -> StepResult:
        self.calls.append({"index": len(self.calls), "name": name, "arguments": args,
                           **result.model_dump(mode="json")})
        payload = json.dumps(result.value if result.ok else {"error": result.error},
                             ensure_ascii=False, default=str)
        if len(payload) > MAX_FEEDBACK_CHARS:  # stays valid JSON so a harness can parse it
            payload = json.dumps({"truncated": True, "chars": len(payload),
                                  "preview": payload[: MAX_FEEDBACK_CHARS - 200],
                                  "hint": "narrow the request (limit, filters) to see all of it"},
                                 ensure_ascii=False)
        self._feedback = payload
        self._image = result.images[-1] if result.images else None
        return StepResult(self.observe(), feedback=payload, error=result.error)

    def final_state(self) -> FinalState:
        ctx = self._context()
        images = {h: {"width": im.width, "height": im.height, "mode": im.mode} for h, im in ctx.images.items()}
        return FinalState(answer=self.answer, status=self.status, workspace=ctx.workspace,
                          apps={"tools": {"calls": self.calls, "images": images}})
