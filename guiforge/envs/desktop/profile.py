"""The LibreOffice user profile: built and warmed once per machine, copied per episode.

``soffice.bin`` started on an empty profile initialises it and exits with code 81 for the
launcher to restart it, and the first GUI start runs graphics self-tests (~2 s). A template
that has been through both starts in ~0.3 s. The template also turns off everything that
would put a dialog between the agent and the document: first-start wizard, tip of the day,
crash recovery, autosave, update checks, release-notes and donation infobars. The "Keep
current format" question on saving to a Microsoft format is left on: real users see it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

LO_PROGRAM = Path("/usr/lib/libreoffice/program")
SOFFICE = LO_PROGRAM / "soffice.bin"
TEMPLATE_FORMAT = 1  # bump when the settings below change meaningfully

_SETTINGS = [
    ("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
    ("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false"),
    ("/org.openoffice.Office.Common/Misc", "UseSystemFileDialog", "false"),
    ("/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "3"),
    ("/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "true"),
    ("/org.openoffice.Office.Recovery/AutoSave", "Enabled", "false"),
    ("/org.openoffice.Office.Recovery/AutoSave", "UserAutoSave", "false"),
    ("/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "false"),
    ("/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments",
     "AutoCheckEnabled", "false"),
    ("/org.openoffice.Setup/Office", "ooSetupInstCompleted", "true"),
    ("/org.openoffice.Office.Impress/Misc/NewDoc", "AutoPilot", "false"),  # template chooser
]


# The looks a desktop task can have (guiforge.presentation's desktop themes): toolbar icon
# size (0 small, 1 large), and for sepia a colour scheme for the page and the area around it. (A dark page
# would need light text, which LibreOffice 7.4 does not give cells whose font colour is
# automatic: black on dark grey.)
_SCHEME = "guiforge-sepia"
_SEPIA = {"DocColor": 0xF3EBDD, "AppBackground": 0x6B6F76, "CalcGrid": 0xC9BBA3, "DocBoundaries": 0x8A7F6E}


def theme_settings(name: str) -> list[tuple[str, str, str]]:
    """Registry settings of a LibreOffice look (props only; the colour scheme's node is made
    by :func:`registry_xml`)."""
    out = [("/org.openoffice.Office.Common/Misc", "SymbolSet", "0" if name == "office-compact" else "1")]
    if name == "office-sepia":
        base = f"/org.openoffice.Office.UI/ColorScheme/ColorSchemes/org.openoffice.Office.UI:ColorScheme['{_SCHEME}']"
        out += [(f"{base}/{entry}", "Color", str(color)) for entry, color in _SEPIA.items()]
        out += [("/org.openoffice.Office.UI/ColorScheme", "CurrentColorScheme", _SCHEME)]
    return out


def _version() -> str:
    """``7.4`` for LibreOffice 7.4.7.2: what the release-notes infobar compares against."""
    out = subprocess.run([str(SOFFICE), "--version"], capture_output=True, text=True,
                         timeout=60).stdout
    m = re.search(r"(\d+)\.(\d+)\.\d+", out)
    if not m:
        raise RuntimeError(f"cannot read the LibreOffice version from {out!r}; is it installed?")
    return f"{m.group(1)}.{m.group(2)}"


def registry_xml(version: str, now_s: int | None = None, theme: list[tuple[str, str, str]] = ()) -> str:
    now_s = int(time.time()) if now_s is None else now_s
    items = [*_SETTINGS, *theme,
             ("/org.openoffice.Setup/Product", "ooSetupLastVersion", version),
             ("/org.openoffice.Setup/Product", "LastTimeDonateShown", str(now_s)),
             ("/org.openoffice.Setup/Product", "LastTimeGetInvolvedShown", str(now_s))]
    body = "\n".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse"><value>{value}</value>'
        f"</prop></item>" for path, name, value in items)
    if any(name == "CurrentColorScheme" for _, name, _ in theme):  # the scheme must exist first
        body = ('<item oor:path="/org.openoffice.Office.UI/ColorScheme/ColorSchemes">'
                f'<node oor:name="{_SCHEME}" oor:op="replace"/></item>\n') + body
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            f"{body}\n</oor:items>\n")


def template_key(width: int, height: int, theme: list[tuple[str, str, str]] = ()) -> str:
    h = hashlib.sha256()
    h.update(f"{TEMPLATE_FORMAT}:{width}x{height}:{_SETTINGS!r}".encode())
    if theme:  # the default look keeps the key (and the cached template) it always had
        h.update(repr(list(theme)).encode())
    for f in (LO_PROGRAM / "versionrc", SOFFICE):
        st = f.stat()
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    root = Path(os.environ.get("GUIFORGE_CACHE_DIR") or Path(tempfile.gettempdir()) / "guiforge-cache")
    root.mkdir(parents=True, exist_ok=True)
    return root


def ensure_template(width: int, height: int, warm_up: Callable[[Path], None],
                    theme: list[tuple[str, str, str]] = ()) -> Path:
    """The template profile for this LibreOffice and screen size, built on first use.

    ``warm_up(profile_dir)`` runs LibreOffice on the profile (headless init, then GUI
    starts) and leaves it initialised; it is called once per machine, under a file lock,
    so concurrent instances wait for one build instead of racing.
    """
    root = cache_root()
    target = root / f"lo-profile-{template_key(width, height, theme)}"
    if (target / "user" / "registrymodifications.xcu").is_file():
        return target
    with open(root / "lo-profile.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "user" / "registrymodifications.xcu").is_file():
            return target
        building = Path(tempfile.mkdtemp(prefix="lo-profile-build-", dir=root))
        try:
            (building / "user").mkdir()
            (building / "user" / "registrymodifications.xcu").write_text(registry_xml(_version(), theme=theme))
            warm_up(building)
            for lock_file in building.rglob(".~lock*"):
                lock_file.unlink()
            building.chmod(0o755)
            building.rename(target)
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return target


def copy_profile(template: Path, dest: Path, uid: int, gid: int) -> None:
    """A private copy of the template for one episode, owned by the sandbox user."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(template, dest, symlinks=True)
    if os.geteuid() == 0:
        for root, dirs, files in os.walk(dest):
            os.chown(root, uid, gid)
            for name in dirs + files:
                os.lchown(os.path.join(root, name), uid, gid)
