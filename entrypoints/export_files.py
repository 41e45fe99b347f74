"""The files ``kifu export`` writes: NDJSON records as served, or one row per decision (``domain.decisions``)
as CSV or Parquet, with each game's analysis joined on where asked for and done."""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import click
import requests

from domain.decisions import ANALYSIS_COLUMNS, COLUMNS, decision_rows, with_analysis

Analysis = Callable[[str], list[dict[str, Any]] | None]  # a game's analysed decisions, None when not done


def analysis_from(base: str) -> Analysis:
    """A game's analysed decisions from the server at ``base`` (None: not asked for, or not done yet)."""
    session = requests.Session()

    def fetch(game_id: str) -> list[dict[str, Any]] | None:
        answer = session.get(f"{base}/v1/games/{game_id}/analysis", timeout=60)
        if answer.status_code == 404:
            return None
        answer.raise_for_status()
        body = answer.json()
        return list(body["decisions"]) if body["status"] == "done" else None

    return fetch


def rows_of(
    records: Iterable[Mapping[str, Any]], analysis: Analysis | None, counted: list[int]
) -> Iterator[dict[str, Any]]:
    """Every record's decision rows (with the analysis columns when ``analysis``); ``counted[0]`` counts
    the games."""
    for record in records:
        counted[0] += 1
        rows = decision_rows(record)
        if analysis is not None:
            rows = with_analysis(rows, analysis(record["game_id"]) or [])
        yield from rows


def write_ndjson(lines: Iterable[str], out: str) -> int:
    """The records as served, one per line."""
    games = 0
    with click.open_file(out, "w", encoding="utf-8") as sink:
        for line in lines:
            games += 1
            sink.write(line + "\n")
    return games


def write_csv(records: Iterable[Mapping[str, Any]], out: str, analysis: Analysis | None) -> int:
    counted = [0]
    columns = COLUMNS + (ANALYSIS_COLUMNS if analysis is not None else ())
    with click.open_file(out, "w", encoding="utf-8") as sink:
        writer = csv.DictWriter(sink, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows_of(records, analysis, counted))
    return counted[0]


def write_parquet(records: Iterable[Mapping[str, Any]], out: str, analysis: Analysis | None) -> int:
    """The rows as one Parquet file: text columns as strings, ``step``, ``seat`` and ``decided_at`` as
    integers, ``value``, ``best_value`` and ``loss`` as nullable floats."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise click.ClickException("--parquet needs pyarrow: pip install 'kifu[parquet]' (or pyarrow)") from None
    counted = [0]
    columns = COLUMNS + (ANALYSIS_COLUMNS if analysis is not None else ())
    numbers = {"value", "best_value", "loss"}
    types = {
        c: pa.int64() if c in ("step", "seat", "decided_at") else pa.float64() if c in numbers else pa.string()
        for c in columns
    }
    rows = [
        {c: (None if row[c] == "" and c in numbers else row[c]) for c in columns}
        for row in rows_of(records, analysis, counted)
    ]
    table = pa.Table.from_pylist(rows, schema=pa.schema([(c, types[c]) for c in columns]))
    pq.write_table(table, out)
    return counted[0]
