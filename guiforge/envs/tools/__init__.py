"""The tools domain: a registry of typed Python tools with JSON schemas, ``search_tool``,
``coding_tool`` (Python in bubblewrap) and the :class:`ToolsEnv` adapter."""

from guiforge.envs.tools.catalog import REGISTRY, areas
from guiforge.envs.tools.context import ImageRef, ToolContext
from guiforge.envs.tools.env import ToolsEnv, ToolsSetup
from guiforge.envs.tools.registry import Tool, ToolError, ToolResult, call_tool, tool
from guiforge.envs.tools.search import rank_tools

__all__ = [
    "REGISTRY", "ImageRef", "Tool", "ToolContext", "ToolError", "ToolResult", "ToolsEnv",
    "ToolsSetup", "areas", "call_tool", "rank_tools", "tool",
]
