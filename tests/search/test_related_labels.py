"""How `encontrar_empresas_relacionadas` and `/v1/relacionadas` name a shared phone."""

from __future__ import annotations

from app.related.service import phone_label


def test_phone_label_with_and_without_ddd() -> None:
    assert phone_label("41", "33334444") == "(41) 33334444"
    assert phone_label(None, "82539656") == "82539656"  # never "(None) 82539656"
    assert phone_label("", "82539656") == "82539656"
