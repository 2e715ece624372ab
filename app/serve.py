"""`registry-api`: serves the app with uvicorn the way production should.

uvicorn trusts `X-Forwarded-For` from loopback by default, which would let any local client
pick its address; here that option is off and the app applies its own rule (`TRUSTED_PROXIES`,
`app.auth.address`). Running `uvicorn app.asgi:app` by hand needs `--no-proxy-headers` for
the same guarantee. Connections speak uvicorn's httptools protocol, each answer sent in one write
(`app.lib.coalesce`; `--http app.lib.coalesce:GatheringHttpTools` by hand).
"""

from __future__ import annotations

import typer
import uvicorn

from app.lib.coalesce import GatheringHttpTools

app = typer.Typer(help="Serve the CNPJ registry API.", add_completion=False)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", envvar="HOST", help="Address to listen on."),
    port: int = typer.Option(8000, envvar="PORT", help="Port to listen on."),
    workers: int = typer.Option(2, envvar="WORKERS", help="Worker processes."),
) -> None:
    """Serve the API until interrupted (SIGTERM drains in-flight requests and the audit queue)."""
    uvicorn.run(
        "app.asgi:app",
        host=host,
        port=port,
        workers=workers,
        proxy_headers=False,
        server_header=False,
        access_log=False,
        http=GatheringHttpTools,
    )
