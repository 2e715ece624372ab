"""`create_app()`: the one way in. One lifespan owns the Elasticsearch client, the PostgreSQL
pool and Redis, and hands them to handlers through dependency injection."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, Request, Response
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException, MethodNotAllowedException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components
from litestar.routes import HTTPRoute
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from app.accounts.keys import check_secret
from app.accounts.routes import (
    bootstrap_start,
    bootstrap_verify,
    create_account,
    create_key,
    list_keys,
    revoke_key,
    set_allowlist,
)
from app.audit.routes import audit_log, my_usage
from app.audit.writer import AuditWriter
from app.auth.access import BEARER, BEARER_SCHEME
from app.auth.address import parse_networks
from app.auth.gate import Gate
from app.auth.middleware import AccessMiddleware
from app.batch.routes import batch_lookup
from app.catalog.routes import city_autocomplete, cnae_autocomplete
from app.context import Backends
from app.errors import HANDLERS
from app.leads.routes import ROUTES as LEAD_ROUTES
from app.lib.body import SafeRequest
from app.lib.database import RECONNECT_WINDOW, connection_pool
from app.lib.documented import DecimalAsNumber, document_errors, document_queries
from app.lib.documented_bodies import document_bodies, document_cnpj_paths
from app.lib.elastic import create_client
from app.lib.guards import reject_unknown_query
from app.lib.heap import frozen
from app.lib.paging import Cursors
from app.lookup.records import RecordStore
from app.lookup.routes import contacts, lookup_cnpj
from app.market.routes import market, segments
from app.mcp import routes as mcp_routes
from app.mcp.routes import mcp_post
from app.monitoring.routes import ROUTES as MONITORING_ROUTES
from app.partners.routes import company_partners, partner_companies
from app.ratelimit.limiter import RateLimiter
from app.related.routes import related, similar
from app.search.city_routes import city_categories, companies_by_city
from app.search.routes import by_name, search_get, search_post, seek_get, seek_post
from app.settings import Settings, get_settings
from app.sintegra.routes import state_registrations
from app.status.routes import service_status
from app.validation.routes import validate_cnpj
from app.web.profiles import ProfileCache
from app.web.router import PAGES, STATIC_FILES, SWAGGER, TEMPLATES, routing_error, warm_pages
from app.web.sessions import Sessions
from app.webhooks.delivery import Sender
from app.worker.queue import queue

API_VERSION = "1.0.0"


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    secret = check_secret(settings.api_key_secret)
    es = create_client(settings.elasticsearch_url, settings.request_timeout)
    # Autocommit: a single statement is its own transaction (one round trip for the key
    # lookup of every request); work of several statements opens `conn.transaction()`.
    pool = connection_pool(
        settings.database_url,
        max_size=10,
        timeout=settings.request_timeout,
        kwargs={"autocommit": True},
        reconnect_timeout=RECONNECT_WINDOW,
    )
    await pool.open(wait=False)
    # A connection broken by a Redis restart fails its next command; one immediate retry on a
    # fresh connection makes the restart invisible once Redis answers again.
    redis = Redis.from_url(
        settings.redis_url,
        socket_timeout=settings.request_timeout,
        socket_connect_timeout=settings.request_timeout,
        retry=Retry(NoBackoff(), 1),
        retry_on_error=[RedisConnectionError],
    )
    audit = AuditWriter(pool)
    gate = Gate(
        pool,
        RateLimiter(redis, settings.redis_prefix),
        audit,
        secret,
        refused_limit=settings.refused_limit,
        trusted_proxies=tuple(parse_networks(settings.trusted_proxies)),
    )
    await queue.open_async(pool=pool)
    backends = Backends(
        es=es, pool=pool, settings=settings, cursors=Cursors(secret), secret=secret, queue=queue,
        sender=Sender.of(settings),
        records=RecordStore(
            settings.records_dir, settings.index_alias, preload=settings.records_preload
        ),
    )  # fmt: skip
    sessions = Sessions(redis, settings.redis_prefix)
    app.state.update(
        es=es, pool=pool, redis=redis, gate=gate, backends=backends, sessions=sessions,
        perfis=ProfileCache(),
    )  # fmt: skip
    audit.start()
    warm_pages(app.template_engine)  # before the freeze: the compiled pages live as long
    if backends.records is not None:
        backends.records.live_index()  # opens the live store now: its preload starts at once
    try:
        with frozen():
            yield
    finally:
        await audit.close()
        await queue.close_async()
        await backends.sender.close()
        if backends.records is not None:
            backends.records.close()
        await es.close()
        await pool.close()
        await redis.aclose()


def _from_state(key: str) -> Callable[[State], Any]:
    """A dependency provider for one of the clients the lifespan stored in the app state."""

    def provide(state: State) -> Any:
        return state[key]

    return provide


def _not_routed(request: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    """A request no route took: on the agent interface's paths, refused in the JSON-RPC shape
    (a method other than POST, a `Host` the router cannot read); elsewhere, a page or the
    API's JSON error."""
    if request.scope["path"].rstrip("/") in mcp_routes.PATHS:
        if isinstance(error, MethodNotAllowedException):
            return mcp_routes.method_refused()
        return mcp_routes.refused(request, error)
    return routing_error(request, error)


def create_app(settings: Settings | None = None, *, protected: bool = True) -> Litestar:
    """The app. `protected=False` drops the access middleware (Bearer keys, rate limits,
    audit); only the benchmark uses it, to measure what that layer costs."""
    settings = settings or get_settings()
    app = Litestar(
        route_handlers=[
            lookup_cnpj,
            contacts,
            validate_cnpj,
            batch_lookup,
            partner_companies,
            company_partners,
            state_registrations,
            search_get,
            search_post,
            seek_get,
            seek_post,
            by_name,
            companies_by_city,
            city_categories,
            cnae_autocomplete,
            city_autocomplete,
            segments,
            market,
            mcp_post,
            related,
            similar,
            service_status,
            list_keys,
            create_key,
            revoke_key,
            set_allowlist,
            bootstrap_start,
            bootstrap_verify,
            create_account,
            audit_log,
            my_usage,
            *MONITORING_ROUTES,
            *LEAD_ROUTES,
            PAGES,
            STATIC_FILES,
        ],
        template_config=TEMPLATES,
        plugins=[DecimalAsNumber()],
        lifespan=[lifespan],
        state=State({"settings": settings}),
        dependencies={
            key: Provide(_from_state(key), sync_to_thread=False)
            for key in ("es", "pool", "redis", "settings", "gate", "backends")
        },
        request_class=SafeRequest,
        request_max_body_size=settings.max_body_size,
        middleware=[AccessMiddleware()] if protected else [],
        guards=[reject_unknown_query],
        exception_handlers={**HANDLERS, HTTPException: _not_routed},  # type: ignore[dict-item]
        openapi_config=OpenAPIConfig(
            title="CNPJ Registry API",
            version=API_VERSION,
            description="Brazilian company registry: Receita Federal's CNPJ open data.",
            path="/schema",
            render_plugins=[
                SwaggerRenderPlugin(
                    js_url=f"{SWAGGER}/swagger-ui-bundle.js",
                    css_url=f"{SWAGGER}/swagger-ui.css",
                    standalone_preset_js_url=f"{SWAGGER}/swagger-ui-standalone-preset.js",
                    favicon="<link rel='icon' href='/static/favicon.svg'>",
                    path="/",
                )
            ],
            components=Components(security_schemes={BEARER: BEARER_SCHEME}),
            security=[{BEARER: []}],
        ),
    )
    document_errors(app)
    document_queries(app)
    document_bodies(app)
    document_cnpj_paths(app)
    app.state.allow = {
        route.path_format: ", ".join(sorted(route.methods))
        for route in app.routes
        if isinstance(route, HTTPRoute)
    }
    return app
