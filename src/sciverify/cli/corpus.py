"""Your own corpus: ``sciverify ingest cord19|pubmed`` (literature dumps to SciFact format) and
``sciverify index`` (a corpus to a retrieval index)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciverify.cli._app import app, console, err_console, ingest_app
from sciverify.cli.options import AddressOpt, DataOpt, EngineOpt, WorkersOpt

__all__ = ["index_corpus", "ingest_cord19", "ingest_pubmed"]


def _print_ingest(report: object, out: Path) -> None:
    from rich.markup import escape

    from sciverify.data.sources.common import IngestReport

    assert isinstance(report, IngestReport)
    for note in report.notes:
        err_console.print(f"  {note}", highlight=False, markup=False, soft_wrap=True)
    done = f"{report.summary()}: {out}"
    console.print(f"[green]{escape(done)}[/]", highlight=False, soft_wrap=True)


@ingest_app.command("cord19")
def ingest_cord19(
    metadata: Annotated[Path, typer.Argument(help="CORD-19 metadata.csv (or .csv.gz).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="Corpus JSONL to write.")],
) -> None:
    """One abstract per cord_uid, split into sentences, with doi, pmid, journal, year and url."""
    from sciverify.data.output_checks import check_output_file
    from sciverify.data.sources.cord19 import ingest_cord19 as run

    check_output_file(out, "corpus file", inputs=[metadata])
    _print_ingest(run(metadata, out), out)


@ingest_app.command("pubmed")
def ingest_pubmed(
    files: Annotated[
        list[Path], typer.Argument(help="PubMed XML files (.xml or .xml.gz): baseline, then updates.")
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Corpus JSONL to write.")],
) -> None:
    """The latest version of every PMID with an abstract (DeleteCitation honoured), labelled sections kept."""
    from sciverify.data.output_checks import check_output_file
    from sciverify.data.sources.pubmed import ingest_pubmed as run

    check_output_file(out, "corpus file", inputs=files)
    _print_ingest(run(files, out), out)


@app.command("index")
def index_corpus(
    corpus: Annotated[Path | None, typer.Argument(help="Corpus JSONL in SciFact format.")] = None,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Index directory to write.")] = None,
    split_sentences: Annotated[
        bool, typer.Option("--split-sentences", help="Accept `abstract` as one string and split it (pysbd).")
    ] = False,
    no_dense: Annotated[
        bool, typer.Option("--no-dense", help="Skip embeddings: lexical retrieval only, builds in seconds.")
    ] = False,
    dense_text: Annotated[
        str,
        typer.Option(
            "--dense-text",
            help="What to embed: sentences (every sentence and title) or title (one short text per "
            "abstract, for corpora too large to embed whole).",
        ),
    ] = "sentences",
    ann: Annotated[
        str,
        typer.Option(
            "--ann", help="Approximate nearest-neighbour graph for the dense part: auto (from 200k "
            "abstracts), on or off (exact search).",
        ),
    ] = "auto",
    default: Annotated[
        bool, typer.Option("--default", help="(Re)build the default index of the SciFact corpus.")
    ] = False,
    write_package: Annotated[
        bool,
        typer.Option(
            "--write-package",
            help="With --default: also rewrite the index the package ships (int8 vectors, BM25, "
            "manifest) from the new build.",
        ),
    ] = False,
    data: DataOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = 2,
) -> None:
    """Index a corpus for retrieval: text store, BM25 and MiniLM embeddings, all memory-mapped."""
    from rich.markup import escape

    from sciverify.errors import ConfigError
    from sciverify.pipeline.engines import make_engine
    from sciverify.retrieval.index import (
        CorpusIndex,
        IndexConfig,
        build_index,
        build_summary,
        default_index_dir,
    )

    if default:
        from sciverify.data.datasets import resolve_data_dir

        if corpus is not None:
            raise ConfigError("--default indexes the SciFact corpus; do not also give CORPUS")
        corpus, out = resolve_data_dir(data).corpus, out or default_index_dir()
    elif corpus is None or out is None:
        raise ConfigError("give CORPUS and -o DIR, or --default for the SciFact corpus")
    if write_package and (not default or no_dense or dense_text != "sentences"):
        raise ConfigError(
            "--write-package rewrites the shipped SciFact index: use it with --default, with sentence vectors"
        )
    from sciverify.data.output_checks import check_output_dir

    check_output_dir(out, "index directory", inputs=[corpus])
    config = IndexConfig(
        dense=not no_dense, split_sentences=split_sentences, dense_text=dense_text, ann=ann
    )
    with make_engine(engine, address, workers) as runner:
        index = CorpusIndex.open(build_index(corpus, out, config, progress=True, engine=runner))
    console.print(f"[green]{escape(build_summary(index))}[/]")
    if write_package:
        from sciverify.retrieval.shipped_index import SHIPPED_DIR, write_shipped_index

        shipped = write_shipped_index(index)
        size = sum(p.stat().st_size for p in SHIPPED_DIR.rglob("*") if p.is_file())
        console.print(
            escape(f"wrote the shipped index ({shipped['vectors']['dtype']} vectors, {size / 1e6:.1f} MB): "
                   f"{SHIPPED_DIR}"),
            highlight=False,
        )
