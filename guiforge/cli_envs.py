"""``guiforge envs serve``: this host's environments behind the environment service's HTTP
API (guiforge.envs.service), for pipelines that list it under ``envs:``."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from guiforge.envs.kinds import ENV_KINDS
from guiforge.envs.service import TOKEN_VARIABLE

envs_app = typer.Typer(help="Serve this host's environments to pipelines on other hosts.", no_args_is_help=True)


@envs_app.command("serve")
def serve(
    kinds: Annotated[str, typer.Option(help="environment kinds to serve, comma separated")] = "web,mobile,desktop",
    capacity: Annotated[int, typer.Option(min=1, max=4096, help="instances leased at once")] = 4,
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: any free port, printed)")] = 8700,
    host: Annotated[str, typer.Option(help="address to bind; loopback unless you mean other hosts to reach it")]
    = "127.0.0.1",
) -> None:
    """Serve environment instances with leases until interrupted (Ctrl-C / SIGTERM). Every
    request must carry the shared token from $GUIFORGE_ENVS_TOKEN."""
    token = os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        typer.echo(f"guiforge envs serve: set {TOKEN_VARIABLE} to a shared secret (clients send the same)",
                   err=True)
        raise typer.Exit(2)
    wanted = [k.strip() for k in kinds.split(",") if k.strip()]
    unknown = [k for k in wanted if k not in ENV_KINDS.names()]
    if not wanted or unknown:
        typer.echo(f"guiforge envs serve: --kinds: unknown kind(s) {', '.join(unknown) or '(none given)'}; "
                   f"installed: {', '.join(sorted(ENV_KINDS.names()))}", err=True)
        raise typer.Exit(2)
    # heavy: fastapi and uvicorn, loaded only by the command that serves
    from guiforge.envs.service.server import serve as serve_envs

    try:
        serve_envs(wanted, capacity, host, port, token, announce=lambda line: print(line, flush=True))
    except OSError as exc:
        typer.echo(f"guiforge envs serve: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    sys.stdout.flush()
