"""`registry-api`: serves the app with uvicorn the way production should.

uvicorn trusts `X-Forwarded-For` from loopback by default, which would let any local client
pick its address; here that option is off and the app applies its own rule (`TRUSTED_PROXIES`,
`app.auth.address`). Running `uvicorn app.asgi:app` by hand needs `--no-proxy-headers` for
the same guarantee. Connections speak uvicorn's httptools protocol, each answer sent in one write
(`app.lib.coalesce`; `--http app.lib.coalesce:GatheringHttpTools` by hand), and the workers take
waiting connections in batches rather than one per turn of their loop (`app.lib.accept`;
`--loop app.lib.accept:new_event_loop` by hand). The loop serves that way a socket it is handed;
uvicorn hands one to its workers when it runs several, and binds its own inside the server when
it runs one, so for one worker this command binds the socket itself and hands it over.
"""

from __future__ import annotations

from typing import Any

import typer
import uvicorn
from uvicorn.config import STARTUP_FAILURE

from app.lib.coalesce import GatheringHttpTools

app = typer.Typer(help="Serve the CNPJ registry API.", add_completion=False)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", envvar="HOST", help="Address to listen on."),
    port: int = typer.Option(8000, envvar="PORT", help="Port to listen on."),
    workers: int = typer.Option(2, envvar="WORKERS", help="Worker processes."),
) -> None:
    """Serve the API until interrupted (SIGTERM drains in-flight requests and the audit queue)."""
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "proxy_headers": False,
        "server_header": False,
        "access_log": False,
        "http": GatheringHttpTools,
        "loop": "app.lib.accept:new_event_loop",
    }
    if workers > 1:  # uvicorn binds the socket and hands it to each worker
        uvicorn.run("app.asgi:app", workers=workers, **options)
        return
    config = uvicorn.Config("app.asgi:app", **options)
    server = uvicorn.Server(config)
    server.run(sockets=[config.bind_socket()])
    if not server.started:
        raise typer.Exit(STARTUP_FAILURE)
