"""Leads for B2B prospecting: objectives read as CNAE segments, filters, deterministic scores
with their reasons, counts, previews, ranked pages, free exports and paid lots (CSV, XLSX,
PDF) made by the worker."""
