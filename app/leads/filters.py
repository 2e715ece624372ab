"""Lead filters (the lead templates of the spec, plus city, porte, situação and the rest) and
their resolution into one Elasticsearch query: the segments an objective or a segment names,
the activity clause, the filter clauses and the scoring clauses.

Unknown filters and invalid values are 400s (tool errors for agents) that name the field.
Situação defaults to `ativa`: a lead list is of companies that can buy.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from app.catalog.service import BuscaCnae, search_cnaes
from app.context import Backends
from app.domain.text import digits, is_code, tokens, trim
from app.errors import BadRequestError, renamed
from app.leads import objective, score
from app.leads.vocabulary import stem, vocabulary
from app.lib.documented_bodies import any_of_fields
from app.lib.wording import free_text
from app.search import filters as f
from app.search.categories import categories

MAX_CODES = 200
"""CNAE codes one search takes, given (`cnae`) or read from the activities asked for (the
longest objective of the vocabulary's examples stands for about 110)."""
CATALOG_CODES = 5
"""CNAE subclasses an activity in words stands for when the vocabulary has no segment."""
FILTROS_NOMEADOS = {
    "sem_email": ("com_email", False),
    "sem_telefone": ("com_telefone", False),
    "com_email": ("com_email", True),
    "com_telefone": ("com_telefone", True),
    "matriz": ("matriz", True),
    "filial": ("matriz", False),
    "simples": ("simples", True),
    "mei": ("mei", True),
    "sem_mei": ("mei", False),
}
"""`filtro` values: each stands for one boolean filter."""

Objetivo = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=300,
        pattern=free_text(required=True),
        description=(
            "O objetivo comercial em palavras: quem você quer atingir, onde, de que porte. "
            "O que vem depois de 'para' é o público."
        ),
        examples=["Vendo software de contabilidade para pequenos restaurantes no Paraná"],
    ),
]
Segmento = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=100,
        pattern=free_text(required=True),
        description=(
            "Um segmento do vocabulário (service://docs), uma categoria de "
            "/v1/seek/cidades/categorias ou palavras da atividade; estados citados "
            '("restaurantes no Paraná") valem como uf quando nem uf nem cidade é informado.'
        ),
        examples=["restaurantes", "padarias", "clinicas odontologicas"],
    ),
]
Cnaes = Annotated[
    str,
    msgspec.Meta(
        max_length=MAX_CODES * 10,  # `4721-1/02,` for each code
        description=(
            "Códigos CNAE separados por vírgula: 2 (divisão), 3 (grupo), 4-5 (classe) ou 7 "
            "dígitos (subclasse); pontuação opcional."
        ),
        examples=["5611201", "5611201,5611203", "4721-1/02"],
        extra_json_schema={"pattern": f"^{f.CNAE_DIGITS}(,{f.CNAE_DIGITS}){{0,{MAX_CODES - 1}}}$"},
    ),
]
Grupo = Annotated[
    str,
    msgspec.Meta(
        max_length=8,
        description="Divisão CNAE de dois dígitos (grupo de atividades).",
        examples=["56"],
        extra_json_schema={"pattern": "^[0-9]{2}$"},  # documented only, as `f.Ufs`
    ),
]
Ufs = Annotated[
    str,
    msgspec.Meta(max_length=f.MAX_LIST_TEXT, description="UF ou UFs separadas por vírgula.",
                 examples=["PR", "SP,RJ"], extra_json_schema={"pattern": f.UF_LIST}),
]  # fmt: skip
Capital = Annotated[float, msgspec.Meta(ge=0, lt=1e15)]
Filtro = Annotated[
    str,
    msgspec.Meta(
        max_length=200,
        description="Filtros nomeados separados por vírgula: " + ", ".join(FILTROS_NOMEADOS) + ".",
        examples=["sem_email", "matriz,sem_mei"],
        extra_json_schema={"pattern": f.list_pattern(list(FILTROS_NOMEADOS))},  # as `f.Ufs`
    ),
]


ATIVIDADE_OU_LUGAR = ("objetivo", "segmento", "cnae", "cnae_grupo", "uf", "cidade")


class FiltrosLead(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Filtros de leads: informe ao menos uma atividade (objetivo, segmento, cnae, cnae_grupo)
    ou um lugar (uf, cidade)."""

    __schema_rules__: ClassVar[dict[str, Any]] = any_of_fields(ATIVIDADE_OU_LUGAR)
    """What the document adds to a body of these filters (`app.lib.documented_bodies`)."""

    objetivo: Objetivo | None = None
    segmento: Segmento | None = None
    cnae: Cnaes | None = None
    cnae_grupo: Grupo | None = None
    incluir_secundarias: (
        Annotated[bool, msgspec.Meta(
            description="Incluir empresas com a atividade só como secundária (pontuam menos)."
        )] | None
    ) = None  # fmt: skip
    uf: Ufs | None = None
    cidade: f.Cidade | None = None
    porte: (
        Annotated[f.Portes, msgspec.Meta(description="ME, EPP, Demais (ou 01, 03, 05).")] | None
    ) = None
    situacao: (
        Annotated[f.Situacoes, msgspec.Meta(description="Padrão: ativa. Ou baixada, suspensa...")]
        | None
    ) = None
    com_email: Annotated[bool, msgspec.Meta(description="Só com e-mail válido.")] | None = None
    com_telefone: Annotated[bool, msgspec.Meta(description="Só com telefone válido.")] | None = None
    exigir_email: Annotated[bool, msgspec.Meta(description="O mesmo que com_email.")] | None = None
    exigir_telefone: (
        Annotated[bool, msgspec.Meta(description="O mesmo que com_telefone.")] | None
    ) = None
    filtro: Filtro | None = None
    matriz: Annotated[bool, msgspec.Meta(description="Só matrizes (ou só filiais).")] | None = None
    simples: Annotated[bool, msgspec.Meta(description="Optantes do Simples.")] | None = None
    mei: Annotated[bool, msgspec.Meta(description="MEI (ou, com false, sem MEI).")] | None = None
    regime_tributario: f.RegimeFiltro | None = None
    capital_min: Capital | None = None
    capital_max: Capital | None = None
    abertura_de: dt.date | None = None
    abertura_ate: dt.date | None = None


FILTER_FIELDS = tuple(FiltrosLead.__struct_fields__)


class SegmentoLido(msgspec.Struct, kw_only=True):
    """A segment the filters name, and how it was found."""

    segmento: str | None
    """The vocabulary's slug (None for codes or catalog matches)."""
    nome: str
    cnaes: list[str]
    origem: Literal["objetivo", "segmento", "categoria", "catalogo", "cnae", "cnae_grupo"]


class Resolvidos(msgspec.Struct, kw_only=True):
    """Lead filters resolved: what `filtros_aplicados` shows, and the query parts."""

    aplicados: dict[str, Any]
    argumentos: dict[str, Any]
    """The same filters as explicit arguments (CNAE codes instead of words, the objective's
    states and size spelled out): what the next calls take."""
    segmentos: list[SegmentoLido]
    filtros: list[dict[str, Any]]
    componentes: tuple[score.Componente, ...]

    def query(self, day: dt.date) -> dict[str, Any]:
        """The ranked query on `day` (the companies' ages count from it)."""
        return {"bool": {"filter": self.filtros, "should": score.should(self.componentes, day)}}

    def counted(self) -> dict[str, Any]:
        """The query without scoring, for counts."""
        return {"bool": {"filter": self.filtros}}


def _bad(field: str, message: str, value: Any = None) -> BadRequestError:
    return f.bad(field, message, value)


def _codes(raw: str, field: str) -> list[str]:
    values = f.list_items(field, raw)
    if not values or len(values) > MAX_CODES:
        raise _bad(field, f"{field}: de 1 a {MAX_CODES} códigos separados por vírgula.", raw)
    for value in values:
        f.cnae_clause(value, secondary=False, field=field)  # 400 naming the field
    return list(dict.fromkeys(digits(value) for value in values))


def _activity_clauses(codes_: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    primary = [f.cnae_clause(code, secondary=False) for code in codes_]
    secondary = [f.cnae_clause(code, secondary=True) for code in codes_]
    return (
        {"bool": {"should": primary, "minimum_should_match": 1}},
        {"bool": {"should": secondary, "minimum_should_match": 1}},
    )


async def _from_words(
    backends: Backends, words: str, origem: Any, field: str
) -> SegmentoLido | None:
    """The catalog's best subclasses for `words`, keeping only those whose description has
    one of the words (stemmed, 4 letters or more): the catalog's search forgives typos, and a
    lead list should not stand on a guess."""
    entrada = BuscaCnae(query=words[:100], limit=CATALOG_CODES)
    found = await search_cnaes(backends, entrada, field=field)  # a 400 names the caller's field
    stems = {stem(word) for word in tokens(words) if len(word) >= 4}
    kept = [
        item.codigo
        for item in found.data
        if stems & {stem(word) for word in tokens(item.descricao or "")}
    ]
    if not kept:
        return None
    return SegmentoLido(segmento=None, nome=words, cnaes=kept, origem=origem)


async def _segment(backends: Backends, raw: str) -> SegmentoLido:
    text = raw.strip()
    slug = text.lower()
    vocab = vocabulary()
    if slug in vocab.segmentos:
        item = vocab.segmentos[slug]
        return SegmentoLido(segmento=slug, nome=item.nome, cnaes=item.cnaes, origem="segmento")
    if slug in categories():
        category = categories()[slug]
        return SegmentoLido(
            segmento=slug, nome=category.nome, cnaes=category.cnaes, origem="categoria"
        )
    read = objective.read(text)
    if read.segmentos:
        first = vocab.segmentos[read.segmentos[0]]
        return SegmentoLido(
            segmento=read.segmentos[0], nome=first.nome, cnaes=first.cnaes, origem="segmento"
        )
    found = await _from_words(backends, text, "catalogo", "segmento")
    if found is None:
        raise BadRequestError(
            f"segmento: nenhuma atividade encontrada para {text[:40]!r}; use "
            "descobrir_segmentos_cnae para achar os códigos CNAE.",
            details={"campo": "segmento", "aceitos": sorted(vocab.segmentos)},
        )
    return found


def _flag(filtros: FiltrosLead, name: str, alias: str) -> bool | None:
    value: bool | None = getattr(filtros, name)
    other: bool | None = getattr(filtros, alias)
    if value is not None and other is not None and value != other:
        raise _bad(alias, f"{alias} e {name} dizem o contrário um do outro.", other)
    return value if value is not None else other


def _given(filtros: FiltrosLead, name: str, alias: str) -> str:
    """The field of the two that was given (`name` when both or neither), for a 400 to name."""
    return alias if getattr(filtros, name) is None and getattr(filtros, alias) is not None else name


def _named(filtros: FiltrosLead) -> dict[str, bool]:
    found: dict[str, bool] = {}
    if filtros.filtro is None:
        return found
    for item in (part.lower() for part in f.list_items("filtro", filtros.filtro)):
        if item not in FILTROS_NOMEADOS:
            raise BadRequestError(
                f"filtro desconhecido: {item[:40]!r}.",
                details={"campo": "filtro", "aceitos": sorted(FILTROS_NOMEADOS)},
            )
        field, value = FILTROS_NOMEADOS[item]
        if found.get(field, value) != value:
            raise _bad("filtro", f"filtro: {item} contradiz outro filtro nomeado.", filtros.filtro)
        found[field] = value
    return found


def _merge(explicit: bool | None, named: bool | None, field: str) -> bool | None:
    if explicit is not None and named is not None and explicit != named:
        raise _bad(field, f"{field} contradiz o filtro nomeado.", explicit)
    return explicit if explicit is not None else named


async def resolve(backends: Backends, filtros: FiltrosLead) -> Resolvidos:
    """The segments, filter clauses and scoring clauses of `filtros` (400s name the field)."""
    segments: list[SegmentoLido] = []
    ufs = filtros.uf
    portes = filtros.porte
    if filtros.objetivo is not None:
        read = objective.read(filtros.objetivo)
        vocab = vocabulary()
        segments += [
            SegmentoLido(segmento=s, nome=vocab.segmentos[s].nome, cnaes=vocab.segmentos[s].cnaes,
                         origem="objetivo")
            for s in read.segmentos
        ]  # fmt: skip
        if not read.segmentos and read.resto and filtros.segmento is None and not filtros.cnae:
            found = await _from_words(backends, read.resto, "catalogo", "objetivo")
            segments += [found] if found else []
        if ufs is None:  # given, even empty, it is the caller's (and refused if empty)
            ufs = ",".join(read.ufs) if read.ufs else None
        if portes is None:
            portes = ",".join(read.portes) if read.portes else None
    if filtros.segmento is not None:
        segments.append(await _segment(backends, filtros.segmento))
        # "restaurantes em SP": the states named in a segment apply as in an objective, not
        # the whole country; a place given (uf or cidade) wins
        states = objective.read(filtros.segmento).ufs if filtros.cidade is None else []
        if ufs is None:
            ufs = ",".join(states) if states else None
    if filtros.cnae is not None:
        codes_ = _codes(filtros.cnae, "cnae")
        segments.append(SegmentoLido(segmento=None, nome="CNAE", cnaes=codes_, origem="cnae"))
    if filtros.cnae_grupo is not None:
        group = trim(filtros.cnae_grupo)
        if not (len(group) == 2 and is_code(group)):
            raise _bad("cnae_grupo", "cnae_grupo: divisão CNAE de 2 dígitos (56, 62...).", group)
        segments.append(
            SegmentoLido(segmento=None, nome=f"Divisão {group}", cnaes=[group], origem="cnae_grupo")
        )
    if filtros.objetivo is not None and not segments and not ufs and not filtros.cidade:
        raise BadRequestError(
            "objetivo: não reconheci um segmento nem um lugar; informe segmento, cnae ou uf, "
            "ou use descobrir_segmentos_cnae.",
            details={"campo": "objetivo"},
        )
    if not segments and ufs is None and filtros.cidade is None:
        raise BadRequestError(
            "Informe uma atividade (objetivo, segmento, cnae, cnae_grupo) ou um lugar "
            "(uf, cidade).",
            details={"aceitos": FILTER_FIELDS},
        )
    named = _named(filtros)
    com_email = _merge(_flag(filtros, "com_email", "exigir_email"), named.get("com_email"),
                       _given(filtros, "com_email", "exigir_email"))  # fmt: skip
    com_telefone = _merge(
        _flag(filtros, "com_telefone", "exigir_telefone"), named.get("com_telefone"),
        _given(filtros, "com_telefone", "exigir_telefone"),
    )  # fmt: skip
    search_filters = f.Filtros(
        uf=ufs,
        municipio=filtros.cidade,
        porte=portes,
        situacao=filtros.situacao if filtros.situacao is not None else "ativa",
        com_email=com_email,
        com_telefone=com_telefone,
        matriz=_merge(filtros.matriz, named.get("matriz"), "matriz"),
        simples=_merge(filtros.simples, named.get("simples"), "simples"),
        mei=_merge(filtros.mei, named.get("mei"), "mei"),
        regime_tributario=filtros.regime_tributario,
        capital_min=filtros.capital_min,
        capital_max=filtros.capital_max,
        abertura_de=filtros.abertura_de,
        abertura_ate=filtros.abertura_ate,
    )
    try:
        clauses = f.clauses(search_filters)
    except BadRequestError as error:
        raise renamed(error, {"municipio": "cidade"}) from None
    codes_ = list(dict.fromkeys(code for segment in segments for code in segment.cnaes))
    if len(codes_) > MAX_CODES:  # none is dropped in silence: fewer activities, or several calls
        raise BadRequestError(
            f"As atividades pedidas somam {len(codes_)} códigos CNAE, mais que os {MAX_CODES} "
            "de uma busca: peça menos segmentos por vez.",
            details={"segmentos": [segment.segmento or segment.nome for segment in segments]},
        )
    primary = secondary = None
    if codes_:
        primary, secondary = _activity_clauses(codes_)
        clauses.append(secondary if filtros.incluir_secundarias is not False else primary)
    regime_asked = search_filters.simples is True or search_filters.mei is True
    applied = {
        **msgspec.to_builtins(search_filters),
        "cnaes": codes_,
        "incluir_secundarias": filtros.incluir_secundarias is not False,
    }
    applied.pop("limit", None)
    applied = {("cidade" if k == "municipio" else k): v for k, v in applied.items()}
    arguments = {k: v for k, v in applied.items() if k not in ("cnaes", "incluir_secundarias")}
    if codes_:
        arguments["cnae"] = ",".join(codes_)
    if filtros.incluir_secundarias is False:
        arguments["incluir_secundarias"] = False
    return Resolvidos(
        aplicados=applied,
        argumentos=arguments,
        segmentos=segments,
        filtros=clauses,
        componentes=score.components(primary, secondary, regime_asked),
    )
