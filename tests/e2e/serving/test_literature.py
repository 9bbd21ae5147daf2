"""CORD-19 and PubMed fixtures through ingest -> index -> verify: the paper's journal, year and a link
reach the command line, the API and the page (real index, real models, a real server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from serving_e2e import ServerProcess, start_server

FIXTURES = Path(__file__).resolve().parents[2] / "unit" / "data" / "sources" / "fixtures"
CLAIM = "Vitamin D supplementation does not reduce fractures in older adults."
SRC = str(Path(__file__).resolve().parents[3] / "src")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "sciverify", *args], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.fixture(scope="module")
def literature_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("literature")
    pubmed, cord = root / "pubmed.jsonl", root / "cord19.jsonl"
    done = _cli(
        "ingest",
        "pubmed",
        str(FIXTURES / "pubmed_baseline.xml.gz"),
        str(FIXTURES / "pubmed_update.xml"),
        "-o",
        str(pubmed),
    )
    assert done.returncode == 0, done.stderr
    assert "3 abstracts written" in done.stdout and "1 deleted by DeleteCitation" in done.stdout
    done = _cli("ingest", "cord19", str(FIXTURES / "metadata.csv"), "-o", str(cord))
    assert done.returncode == 0, done.stderr
    corpus = root / "corpus.jsonl"
    corpus.write_bytes(pubmed.read_bytes() + cord.read_bytes())
    done = _cli("index", str(corpus), "-o", str(root / "index"))
    assert done.returncode == 0, done.stderr
    return root / "index"


def test_verify_shows_the_paper(literature_index: Path) -> None:
    done = _cli("verify", CLAIM, "--index", str(literature_index), "--json", "-k", "3")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    results = body["supporting"] + body["refuting"]
    assert results, "the vitamin D trial should be judged evidence for its own finding"
    top = results[0]
    assert top["doc_id"] == 31000001
    assert top["paper"]["journal"] == "Lancet (London, England)" and top["paper"]["year"] == 2019
    assert top["paper"]["link"] == "https://doi.org/10.1016/S0140-6736(19)00001-1"
    # the study facts carry the record's year and journal; what was searched is named with its years
    assert (top["study"]["year"], top["study"]["journal"]) == (2019, "Lancet (London, England)")
    searched = body["searched"]
    assert searched["name"] == "CORD-19 + PubMed" and searched["documents"] >= 3
    assert searched["first_year"] <= 1998 and searched["last_year"] >= 2019
    shown = _cli("verify", CLAIM, "--index", str(literature_index), "-k", "3")
    assert "https://doi.org/10.1016/S0140-6736(19)00001-1" in shown.stdout
    assert "abstracts of the CORD-19 + PubMed corpus (published " in shown.stdout


@pytest.fixture(scope="module")
def literature_server(
    literature_index: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    server = start_server(tmp_path_factory.mktemp("serve-lit"), args=("--index", str(literature_index)))
    try:
        server.wait_ready(timeout=600)
        yield server
    finally:
        server.stop()


def test_api_and_page_link_to_the_paper(literature_server: ServerProcess) -> None:
    url = literature_server.url
    r = httpx.post(url + "/api/verify", json={"claim": CLAIM, "k": 3}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    top = (body["supporting"] + body["refuting"])[0]
    assert top["doc_id"] == 31000001 and top["link"] == "https://doi.org/10.1016/S0140-6736(19)00001-1"
    paper = top["paper"]
    assert paper["doi"] == "10.1016/S0140-6736(19)00001-1" and paper["pmid"] == "31000001"
    assert paper["link"] == "https://doi.org/10.1016/S0140-6736(19)00001-1"
    cord = httpx.get(url + "/api/abstracts/2b73a28n", timeout=30).json()
    assert cord["paper"]["link"] == "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC59574/"
    page = httpx.get(url + "/", params={"claim": CLAIM, "k": 3}, timeout=120).text
    assert (
        'href="https://doi.org/10.1016/S0140-6736(19)00001-1"' in page
        and "Lancet (London, England) 2019" in page
    )
    assert "abstracts of the CORD-19 + PubMed corpus (published " in page
    assert '<li class="badge">2019</li><li class="badge">Lancet (London, England)</li>' in page
    detail = httpx.get(url + "/abstracts/31000002", timeout=30).text
    assert (
        'href="https://pubmed.ncbi.nlm.nih.gov/31000002/"' in detail
        and "Revista médica de Chile 1998" in detail
    )
