"""Web and mobile adapters: Playwright + Debian's Chromium over the local apps in
:mod:`guiforge.envs.apps`."""

from guiforge.envs.web.mobile_env import MobileEnv
from guiforge.envs.web.page_env import ActionError, PageEnv
from guiforge.envs.web.web_env import WebEnv

__all__ = ["ActionError", "MobileEnv", "PageEnv", "WebEnv"]
