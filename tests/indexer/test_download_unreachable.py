"""Receita's server unreachable (a closed port on loopback): a listing page and a file's size
(HEAD) are tried again, then reported as the download's transient failure naming the network's
error, never as the network's own exception."""

from __future__ import annotations

import asyncio

import aiohttp

from indexer import download
from tests.loopback import free_port


async def _ask_unreachable() -> list[BaseException | object]:
    base = f"http://127.0.0.1:{free_port()}/dados/cnpj/"
    async with aiohttp.ClientSession() as session:
        source = download.Source(session, base)
        return await asyncio.gather(
            source.months(), source.size(f"{base}2026-10/Empresas0.zip"), return_exceptions=True
        )


def test_unreachable_source_listing_and_size_transient_after_retries() -> None:
    listing, size = asyncio.run(_ask_unreachable())
    for failure in (listing, size):
        assert isinstance(failure, download.TransientError), failure
        assert "ClientConnectorError" in str(failure)
