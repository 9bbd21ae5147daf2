from __future__ import annotations

import json
import subprocess
import sys

from sciverify.retrieval.index import CorpusIndex


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sciverify", "index", *args], capture_output=True, text=True)


def test_index_command_builds_a_string_id_corpus_with_split_sentences(write_jsonl, tmp_path):
    corpus = write_jsonl(
        "cord.jsonl",
        [
            json.dumps(
                {"doc_id": "ug7v899j", "title": "T", "abstract": "One finding. A second, by Lee et al. here."}
            ),
            json.dumps({"doc_id": "02tnwd4m", "title": "U", "abstract": ["Already split."]}),
        ],
    )
    result = _run(str(corpus), "-o", str(tmp_path / "idx"), "--no-dense", "--split-sentences")
    assert result.returncode == 0, result.stderr
    assert "indexed 2 abstracts, 3 sentences" in result.stdout
    index = CorpusIndex.open(tmp_path / "idx")
    assert index.abstract(0).sentences == ("One finding.", "A second, by Lee et al. here.")
    assert index.row_of("02tnwd4m") == 1


def test_index_command_reports_bad_input_in_one_line(write_jsonl, tmp_path):
    corpus = write_jsonl(
        "dup.jsonl", ['{"doc_id": 1, "abstract": ["a"]}', '{"doc_id": 1, "abstract": ["b"]}']
    )
    result = _run(str(corpus), "-o", str(tmp_path / "idx"), "--no-dense")
    assert result.returncode == 2
    assert f"{corpus}:2: duplicate doc_id 1 (first seen on line 1)" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    missing = _run(str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "idx"))
    assert missing.returncode == 2 and "file not found" in missing.stderr
    usage = _run()
    assert usage.returncode == 2 and "--default" in usage.stderr
