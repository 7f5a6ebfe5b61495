"""The web apps a world's data is shown in: each app's name, title and the route an episode
starts on. The adapter (guiforge.envs.apps serves them), the preparer that seeds their
state and the tests agree on this list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AppInfo:
    name: str
    title: str
    home: str  # the route an episode starts on when a task names this app


APPS: tuple[AppInfo, ...] = (
    AppInfo("mail", "Mail", "/mail/inbox"),
    AppInfo("calendar", "Calendar", "/calendar"),
    AppInfo("contacts", "Contacts", "/contacts"),
    AppInfo("shop", "Shop", "/shop"),
    AppInfo("notes", "Notes", "/notes"),
    AppInfo("bank", "Bank", "/bank"),
    AppInfo("travel", "Travel", "/travel"),
    AppInfo("chat", "Chat", "/chat"),
)
APP_NAMES: tuple[str, ...] = tuple(a.name for a in APPS)


def app_info(name: str) -> AppInfo:
    for a in APPS:
        if a.name == name:
            return a
    raise KeyError(f"unknown web app {name!r}; known apps: {', '.join(APP_NAMES)}")
