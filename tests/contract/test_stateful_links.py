"""The sequences the contract run follows in its stateful phase: Schemathesis infers links
between operations from the OpenAPI document (the ids a response returns, the paths that take
them), and these must include a key created then revoked, and a monitor created then tested,
read, changed and deleted, with its delivery log leading to a resend."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


@pytest.fixture(scope="module")
def transitions() -> set[str]:
    machine = schemathesis.openapi.from_path(str(DOCUMENT)).as_state_machine()
    return {name for name in dir(machine) if "___" in name and not name.startswith("_")}


def _follows(transitions: set[str], source: str, target: str) -> bool:
    """Whether a link leads from the answer of `source` (e.g. `POST_v1_me_chaves___201`) to
    operation `target` (e.g. `DELETE_v1_me_chaves_key_id_`)."""
    return any(name.startswith(source) and name.endswith(f"__{target}") for name in transitions)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("POST_v1_me_chaves___201", "DELETE_v1_me_chaves_key_id_"),
        ("POST_v1_me_monitoramentos___201", "POST_v1_me_monitoramentos_monitor_id_testar"),
        ("POST_v1_me_monitoramentos___201", "GET_v1_me_monitoramentos_monitor_id_"),
        ("POST_v1_me_monitoramentos___201", "PATCH_v1_me_monitoramentos_monitor_id_"),
        ("POST_v1_me_monitoramentos___201", "DELETE_v1_me_monitoramentos_monitor_id_"),
        ("GET_me_monitoramentos_logs___200", "POST_v1_me_monitoramentos_logs_entrega_id_reenviar"),
        ("GET_v1_me_lotes___200", "GET_v1_me_lotes_lote_id_"),
    ],
)
def test_stateful_phase_follows_the_resource_sequences(
    transitions: set[str], source: str, target: str
) -> None:
    assert _follows(transitions, source, target), sorted(
        name for name in transitions if name.startswith(source)
    )
