"""Settings read from the environment once, validated at start-up, with defaults that match
`scripts/services.sh` on a fresh machine."""

from __future__ import annotations

import os
from functools import lru_cache

import msgspec

from app.auth.address import parse_networks
from app.lib.elastic import nodes


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    elasticsearch_url: str = "http://127.0.0.1:9200"
    """One node's address, or the addresses of a cluster's nodes separated by commas (a request
    a node cannot answer goes to another; docs/scaling.md)."""
    database_url: str = "postgresql://registry:registry@127.0.0.1:5433/registry"
    redis_url: str = "redis://127.0.0.1:6380/0"
    index_alias: str = "empresas"
    request_timeout: float = 5.0
    """Seconds before a call to a dependency gives up."""
    health_timeout: float = 2.0
    redis_prefix: str = "cnpj:"
    """Prefix of every Redis key the app writes (rate-limit windows)."""
    refused_limit: int = 10
    """Calls refused with 401 an IP address may make per rolling minute; beyond, 429."""
    trusted_proxies: str = ""
    """Comma-separated CIDRs of the reverse proxies in front of the app. Empty (the default):
    the caller is the TCP peer and `X-Forwarded-For` is ignored. Set: a request from one of
    them is attributed to the right-most address of `X-Forwarded-For` outside them."""
    status_detail_networks: str = "127.0.0.0/8,::1/128"
    """Comma-separated CIDRs whose callers (the address `TRUSTED_PROXIES` gives) see the
    answering process's counters in `/v1/status` (audit queue, fast lane, load shedding) and
    the live index's name; everyone else sees the status, the dependencies and the release
    (alias, documents, reference date, load time)."""
    sign_in_limit: int = 10
    """Dashboard sign-in forms (code requests and code checks) an IP address may send per
    rolling minute; beyond, 429. Each e-mail address has the token bootstrap's limits too."""
    max_body_size: int = 64 * 1024
    """Largest request body accepted, in bytes; larger ones get 413 before any work."""
    api_key_secret: str = ""
    """Server secret of the keyed hash (HMAC-SHA256) of API keys and e-mail codes. Required:
    the app refuses to start without one (`scripts/run.sh` generates one into `.state/`)."""
    public_url: str = "http://127.0.0.1:8000"
    """Base address callers use; `mcp_url` of the token bootstrap is this plus `/mcp`."""
    mcp_allowed_hosts: str = ""
    """Comma-separated host names the agent interface answers to, beside loopback and the host
    of `public_url` (DNS-rebinding protection: other Host or Origin headers are refused)."""
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 25
    smtp_sender: str = "CNPJ Registry <no-reply@localhost>"
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_starttls: bool = False
    mail_dir: str = ""
    """A folder where e-mails are written as `.eml` files (readable by their owner only) instead
    of being sent: development, and the sample setup of `scripts/run.sh` when no `SMTP_HOST`
    is given. Empty (the default): SMTP."""
    webhook_allow_networks: str = ""
    """Comma-separated CIDRs webhooks may reach beside public addresses (development, tests);
    empty by default: private, loopback, link-local and reserved addresses are refused."""
    webhook_allow_http: bool = False
    """Accept `http://` webhook URLs (otherwise `https://` only)."""
    webhook_timeout: float = 10.0
    """Seconds a webhook endpoint has to answer one attempt."""
    webhook_retry_delays: str = "30,120,600,1800,3600,7200,14400,28800,43200,86400,86400"
    """Seconds before each retry of a failed delivery (jitter of up to 20 % added): eleven
    retries over about three days, then the monitor is paused."""
    worker_concurrency: int = 8
    """Jobs one worker process runs at once."""
    worker_heartbeat: float = 2.0
    """Seconds between a worker's heartbeats."""
    worker_stalled_after: float = 6.0
    """Seconds without a heartbeat after which a worker's running jobs are run again."""
    records_dir: str = ".state/registros"
    """The record stores the indexer writes (`indexer.records`); relative paths start at the
    project's root. Lookups read the live release's store when this process has it."""
    records_preload: bool = True
    """Read the live store into the page cache when a process opens it, in the background, if
    it takes at most half the memory available (`app.lib.pagecache`); false leaves it to the
    first requests' page faults."""
    fast_lookups: bool = True
    """Whether `GET /v1/cnpj/{cnpj}` is answered by its fast lane (`app.lookup.fast`) when it
    can; false sends every lookup through the framework."""
    max_in_flight: int = 100
    """Requests one API process answers at once; the excess gets 503 with `Retry-After: 1` at
    once (`app.lib.shedding`)."""
    max_searches_in_flight: int = 16
    """Of those, searches (routes that query Elasticsearch) one API process answers at once:
    the ceiling of the adaptive limit (`app.lib.shedding.SearchLimit`)."""
    search_latency_target_ms: int = 60
    """While the moving average of the searches' latency is above this, the process's search
    limit is lowered, and raised again once it is within (`app.lib.shedding`); 0 (or less)
    keeps the limit fixed."""
    lots_dir: str = ".state/lotes"
    """Where lead lots' files are kept (relative paths start at the project's root)."""
    lots_keep_hours: int = 168
    """Hours a finished lot's file can be downloaded (then it expires and is deleted)."""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings from `ELASTICSEARCH_URL`, `DATABASE_URL`, `REDIS_URL`, `INDEX_ALIAS`,
    `API_KEY_SECRET`, `SMTP_HOST`... (each field's name upper-cased)."""
    values = {
        field: os.environ[field.upper()]
        for field in Settings.__struct_fields__
        if os.environ.get(field.upper())
    }
    try:
        settings = msgspec.convert(values, Settings, strict=False)
        parse_networks(settings.trusted_proxies)
        parse_networks(settings.status_detail_networks)
        nodes(settings.elasticsearch_url)
    except (msgspec.ValidationError, ValueError) as error:
        raise SystemExit(f"invalid settings: {error}") from error
    return settings
