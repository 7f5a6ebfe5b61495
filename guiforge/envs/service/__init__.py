"""Environments as a service: a host's environment manager behind an HTTP API with leases
(server.py, leases.py; ``guiforge envs serve``) and the client side a pipeline's
``envs: [http://host:port, ...]`` uses (client.py, kind.py): a remote pool is one more
environment kind. Bodies carry screenshots and files as raw bytes (wire.py)."""

TOKEN_VARIABLE = "GUIFORGE_ENVS_TOKEN"  # the shared token, on the hosts and on their clients
