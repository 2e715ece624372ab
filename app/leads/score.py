"""The lead score: 0 to 100 points from documented, deterministic components.

Each component is a set of named Elasticsearch clauses (`constant_score` with the points as
boost), placed as `should` clauses beside the lead filters: a company's score is the sum of the
points of the clauses it matches, computed by Elasticsearch, so ranked pages and lots stream in
score order; `matched_queries` tells which clauses matched, and `motivo` lists every component
with the points earned. The same definitions serve the query and the explanation.

| componente            | pontos | regra                                                        |
| situacao              | 25     | situação cadastral ativa                                      |
| email                 | 15     | ao menos um e-mail com sintaxe válida                         |
| telefone              | 15     | ao menos um telefone com DDD existente e número plausível     |
| atividade             | 15     | a atividade do filtro é a principal (15) ou só secundária (5) |
| porte                 | 5      | porte EPP ou Demais 5, ME 3                                   |
| capital               | 5      | capital social >= 100 mil 5, >= 10 mil 3, >= 1 mil 1          |
| idade                 | 10     | aberta há 5 anos ou mais 10, 2 a 5 anos 6, 1 a 2 anos 3       |
| matriz                | 5      | é a matriz (a sede decide as compras)                         |
| regime                | 5      | não é MEI (quando o filtro pede Simples ou MEI, todas ganham) |

A component the filters make moot (no activity asked: `atividade`; MEI or Simples asked:
`regime`) gives its points to every company, so the scale stays 0-100. Ages count from the day
the listing ranks on (today, UTC, for a first page or a lot; the first page's day for the pages
after it: `app.lib.listing`), so a score changes only from one day to the next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import msgspec

ATIVA = "02"


@dataclass(frozen=True, slots=True)
class Regra:
    nome: str
    """The clause's `_name` (`componente.regra`)."""
    pontos: int
    descricao: str
    clause: dict[str, Any] | Callable[[date], dict[str, Any]]
    """The clause, or the clause of the day the listing ranks on."""


@dataclass(frozen=True, slots=True)
class Componente:
    nome: str
    maximo: int
    descricao: str
    regras: tuple[Regra, ...]
    """Mutually exclusive rules, best first: a company matches at most one."""


class Motivo(msgspec.Struct, kw_only=True):
    componente: str
    pontos: int
    maximo: int
    motivo: str


def _range(field: str, **bounds: Any) -> dict[str, Any]:
    return {"range": {field: bounds}}


def _opened(years: int, within: int | None = None) -> Callable[[date], dict[str, Any]]:
    """Opened `years` or more before the day (and less than `within` years before it)."""

    def clause(day: date) -> dict[str, Any]:
        bounds = {"lte": f"{day.isoformat()}||-{years}y/d"}
        if within is not None:
            bounds["gt"] = f"{day.isoformat()}||-{within}y/d"
        return _range("abertura", **bounds)

    return clause


def _everyone(nome: str, pontos: int, descricao: str) -> Componente:
    rule = Regra(f"{nome}.todas", pontos, descricao, {"match_all": {}})
    return Componente(nome, pontos, descricao, (rule,))


def components(
    primary: dict[str, Any] | None, secondary: dict[str, Any] | None, regime_asked: bool
) -> tuple[Componente, ...]:
    """The components for lead filters whose activity clause is `primary` (on the primary
    activity) and `secondary` (on any activity); None when no activity was asked."""
    if primary is None or secondary is None:
        activity = _everyone("atividade", 15, "nenhuma atividade pedida: todas pontuam")
    else:
        activity = Componente(
            "atividade",
            15,
            "a atividade pedida é a principal (15) ou só secundária (5)",
            (
                Regra("atividade.principal", 15, "atividade pedida é a principal", primary),
                Regra(
                    "atividade.secundaria",
                    5,
                    "atividade pedida é só secundária",
                    {"bool": {"filter": [secondary], "must_not": [primary]}},
                ),
            ),
        )
    regime = (
        _everyone("regime", 5, "o filtro pede Simples ou MEI: todas pontuam")
        if regime_asked
        else Componente(
            "regime",
            5,
            "não é MEI",
            (
                Regra(
                    "regime.nao_mei",
                    5,
                    "não é MEI",
                    {"bool": {"must_not": [{"term": {"mei.optante": True}}]}},
                ),
            ),
        )
    )
    return (
        Componente(
            "situacao", 25, "situação cadastral ativa",
            (Regra("situacao.ativa", 25, "situação cadastral ativa",
                   {"term": {"situacao_cadastral.codigo": ATIVA}}),),
        ),
        Componente(
            "email", 15, "e-mail com sintaxe válida",
            (Regra("email.valido", 15, "tem e-mail válido",
                   {"term": {"contato.disponibilidade.email": True}}),),
        ),
        Componente(
            "telefone", 15, "telefone com DDD e número plausíveis",
            (Regra("telefone.valido", 15, "tem telefone válido",
                   {"term": {"contato.disponibilidade.telefone": True}}),),
        ),
        activity,
        Componente(
            "porte", 5, "porte EPP ou Demais (5), ME (3)",
            (
                Regra("porte.epp_demais", 5, "porte EPP ou Demais",
                      {"terms": {"porte.codigo": ["03", "05"]}}),
                Regra("porte.me", 3, "porte ME", {"term": {"porte.codigo": "01"}}),
            ),
        ),
        Componente(
            "capital", 5, "capital social: 100 mil ou mais (5), 10 mil (3), mil (1)",
            (
                Regra("capital.100k", 5, "capital de R$ 100 mil ou mais",
                      _range("capital_social", gte=100_000)),
                Regra("capital.10k", 3, "capital de R$ 10 mil a 100 mil",
                      _range("capital_social", gte=10_000, lt=100_000)),
                Regra("capital.1k", 1, "capital de R$ 1 mil a 10 mil",
                      _range("capital_social", gte=1_000, lt=10_000)),
            ),
        ),
        Componente(
            "idade", 10, "aberta há 5 anos ou mais (10), 2 a 5 (6), 1 a 2 (3)",
            (
                Regra("idade.5_anos", 10, "aberta há 5 anos ou mais", _opened(5)),
                Regra("idade.2_anos", 6, "aberta há 2 a 5 anos", _opened(2, within=5)),
                Regra("idade.1_ano", 3, "aberta há 1 a 2 anos", _opened(1, within=2)),
            ),
        ),
        Componente(
            "matriz", 5, "é a matriz",
            (Regra("matriz.sim", 5, "é a matriz", {"term": {"matriz_filial.codigo": "1"}}),),
        ),
        regime,
    )  # fmt: skip


MAXIMUM = 100


def should(found: tuple[Componente, ...], day: date) -> list[dict[str, Any]]:
    """The scoring clauses on `day`: each rule as a `constant_score` worth its points, named."""
    return [
        {
            "constant_score": {
                "filter": rule.clause(day) if callable(rule.clause) else rule.clause,
                "boost": rule.pontos,
                "_name": rule.nome,
            }
        }
        for component in found
        for rule in component.regras
    ]


def explain(found: tuple[Componente, ...], matched: list[str]) -> tuple[int, list[Motivo]]:
    """The score and every component's points, from the names of the clauses a hit matched."""
    names = set(matched)
    reasons: list[Motivo] = []
    for component in found:
        rule = next((rule for rule in component.regras if rule.nome in names), None)
        reasons.append(
            Motivo(
                componente=component.nome,
                pontos=rule.pontos if rule else 0,
                maximo=component.maximo,
                motivo=rule.descricao if rule else f"não: {component.descricao}",
            )
        )
    return sum(reason.pontos for reason in reasons), reasons
