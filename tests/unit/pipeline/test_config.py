"""PipelineConfig TOML round trip and validation; claim checks; oracle configurations."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciverify.decision.settings import DecisionConfig
from sciverify.errors import ConfigError, InputError
from sciverify.pipeline.config import PipelineConfig
from sciverify.pipeline.run import oracle_config, read_claim_texts
from sciverify.pipeline.verify import MAX_CLAIM_CHARS, check_claim
from sciverify.retrieval.base import RetrievalConfig
from sciverify.retrieval.rerank import RerankConfig


def test_toml_round_trip(tmp_path: Path) -> None:
    cfg = PipelineConfig(
        retrieval=RetrievalConfig(method="bm25", k=7, fusion_weight=0.3),
        rerank=RerankConfig(method="sentence", depth=15, weight=0.4),
        selector="cosine",
        decision=DecisionConfig(sentence_threshold=0.45, max_sentences=2, emit_threshold=0.35),
    )
    path = tmp_path / "pipeline.toml"
    cfg.dump_toml(path)
    assert PipelineConfig.load_toml(path) == cfg
    assert "[decision]" in path.read_text() and 'method = "bm25"' in path.read_text()
    assert "[rerank]" in path.read_text() and "depth = 15" in path.read_text()


def test_a_file_without_a_rerank_section_means_no_reranking() -> None:
    # pipeline.toml files written before the reranking stage existed
    cfg = PipelineConfig.loads_toml("[retrieval]\nk = 5\n")
    assert cfg.rerank == RerankConfig() and not cfg.rerank.enabled


def test_defaults_round_trip() -> None:
    assert PipelineConfig.loads_toml(PipelineConfig().dumps_toml()) == PipelineConfig()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("selector = 'trained'\nbogus = 1\n", "unknown pipeline settings: bogus"),
        ("[retrieval]\nwhat = 1\n", "unknown retrieval settings: what"),
        ("[rerank]\nhow = 1\n", "unknown rerank settings: how"),
        ("[rerank]\nmethod = 'cross'\n", "rerank method must be one of none, sentence"),
        ("[rerank]\ndepth = 0\n", "rerank depth must be >= 1"),
        ("[rerank]\nweight = 1.5\n", "rerank weight must be in"),
        ("[decision]\nsentence_threshold = 2.0\n", "sentence_threshold"),
        ("config_version = 9\n", "config_version 9"),
        ("selector = \n", "invalid TOML"),
    ],
)
def test_bad_toml_is_a_config_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PipelineConfig.loads_toml(text)


def test_check_claim() -> None:
    assert check_claim("  ALDH1   expression\n predicts  ") == "ALDH1 expression predicts"
    for bad in ("", "   \n\t"):
        with pytest.raises(InputError, match="claim is empty"):
            check_claim(bad)
    with pytest.raises(InputError, match=f"10000 characters long; the limit is {MAX_CLAIM_CHARS}"):
        check_claim("a" * 10_000)
    with pytest.raises(InputError, match="must be a string"):
        check_claim(None)


def test_oracle_config() -> None:
    base = PipelineConfig()
    cfg = oracle_config(base, "oracle", "oracle")
    assert cfg.retrieval.method == "oracle" and cfg.selector == "oracle"
    assert cfg.decision.max_sentences == 64
    assert oracle_config(base, None, None) == base


def test_oracle_retrieval_does_not_feed_made_up_scores_to_the_emit_model() -> None:
    from sciverify.decision.settings import DecisionConfig

    learned = DecisionConfig(confidence="learned", sentence_threshold=0.3, max_sentences=2, max_listed=3)
    base = PipelineConfig(decision=learned)
    cfg = oracle_config(base, "oracle", None)
    assert cfg.decision.confidence == "heuristic"
    assert (cfg.decision.sentence_threshold, cfg.decision.min_rationale_score) == (0.3, 0.3)
    assert (cfg.decision.max_sentences, cfg.decision.max_listed) == (2, 3)
    assert oracle_config(base, None, None).decision.confidence == "learned"


def test_read_claim_texts_reads_only_id_and_claim(write_jsonl) -> None:
    path = write_jsonl(
        "c.jsonl",
        [
            '{"id": 1, "claim": "A causes B.", "evidence": {"5": "junk"}}',
            '{"id": "x2", "claim": "C.", "extra": [1]}',
        ],
    )
    claims = read_claim_texts(path)
    assert [(c.id, c.text, c.evidence) for c in claims] == [(1, "A causes B.", {}), ("x2", "C.", {})]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"claim": "x"}', "missing or invalid 'id'"),
        ('{"id": 3}', "claim 3 has no 'claim' field"),
        ('{"id": 3, "claim": 42}', r"claim 3: 'claim' must be a string, got int \(42\)"),
        ('{"id": 3, "claim": "  "}', "claim 3 has an empty 'claim' text"),
        ('{"id": "", "claim": "x"}', "missing or invalid 'id'"),
        ('{"id": "c9", "claim": "' + "a" * 1001 + '"}', "claim 'c9' is 1001 characters long; the limit is"),
        ("[1]", "JSON object"),
    ],
)
def test_read_claim_texts_errors_name_the_line(write_jsonl, line: str, message: str) -> None:
    from sciverify.errors import DataFormatError

    path = write_jsonl("c.jsonl", ['{"id": 1, "claim": "ok"}', line])
    with pytest.raises(DataFormatError, match=message) as info:
        read_claim_texts(path)
    assert info.value.line == 2


def test_one_claim_limit_for_cli_and_server(write_jsonl, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same variable moves the limit of `predict`'s reader, the verifier and the server."""
    from sciverify.errors import DataFormatError
    from sciverify.pipeline.config import MAX_CLAIM_CHARS, PipelineConfig
    from sciverify.serving.settings import Settings

    assert Settings().max_claim_chars == PipelineConfig().claim_limit == MAX_CLAIM_CHARS == 1000
    monkeypatch.setenv("SCIVERIFY_MAX_CLAIM_CHARS", "40")
    assert Settings().max_claim_chars == PipelineConfig().claim_limit == 40
    path = write_jsonl("c.jsonl", ['{"id": 1, "claim": "' + "b" * 41 + '"}'])
    with pytest.raises(DataFormatError, match="claim 1 is 41 characters long; the limit is 40") as info:
        read_claim_texts(path)
    assert info.value.line == 1
    with pytest.raises(InputError, match="the limit is 40"):
        check_claim("c" * 41)
    assert "max_claim_chars" not in PipelineConfig().dumps_toml(), "the shared limit is not pinned in files"


def test_the_decision_ships_in_its_own_folder_and_older_folders_still_load(tmp_path: Path) -> None:
    from dataclasses import replace

    from sciverify.decision.settings import DECISION_DIR, DECISION_TOML, dump_decision, load_decision
    from sciverify.pipeline.config import PIPELINE_TOML, default_model_dir, tuned_config

    shipped = tuned_config()
    assert shipped.decision == load_decision(default_model_dir() / DECISION_DIR / DECISION_TOML)
    assert "[decision]" not in (default_model_dir() / "rationale" / PIPELINE_TOML).read_text()
    decision = replace(shipped.decision, max_emitted=2)
    # a folder written before the decision had its own: the [decision] table beside the selector
    old = tmp_path / "old"
    (old / "rationale").mkdir(parents=True)
    replace(shipped, decision=decision).dump_toml(old / "rationale" / PIPELINE_TOML)
    assert tuned_config(old).decision == decision
    # the layout a run writes now: the pipeline without it, the decision in decision/
    new = tmp_path / "new"
    (new / "rationale").mkdir(parents=True)
    shipped.dump_toml(new / "rationale" / PIPELINE_TOML, decision=False)
    dump_decision(decision, new / DECISION_DIR / DECISION_TOML)
    assert tuned_config(new) == replace(shipped, decision=decision)
    # both: one would be ignored, so neither is guessed
    dump_decision(decision, old / DECISION_DIR / DECISION_TOML)
    with pytest.raises(ConfigError, match=r"has a \[decision\] table and .*decision.toml exists"):
        tuned_config(old)
    (new / DECISION_DIR / DECISION_TOML).write_text("[decision]\nmax_emitted = 0\n")
    with pytest.raises(ConfigError, match=r"decision.toml: .*max_emitted"):
        tuned_config(new)
