"""The reader under the protocol, CI-sized: two folds of a few real claims, a tiny MiniLM reader each."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from sciverify.data.io import read_claims, read_corpus  # noqa: E402
from sciverify.data.records import doc_key  # noqa: E402
from sciverify.training.cv_reader import read_reader_rows, reader_milestones, run_reader_cv  # noqa: E402
from sciverify.training.reader_train import ReaderTrainConfig  # noqa: E402

RUN = Path(__file__).resolve().parents[2] / "results" / "cv5"


def _tiny_run(tmp: Path, claims, per_fold: int = 5) -> list:
    """A two-fold run directory made of the committed run's first claims with evidence in folds 0 and 1."""
    by_id = {str(c.id): c for c in claims}
    kept, fold_of = [], {}
    for f in (0, 1):
        rows = []
        for line in (RUN / f"fold-{f}" / "candidates.jsonl").read_text().splitlines():
            row = json.loads(line)
            if by_id[str(row["id"])].evidence and len(rows) < per_fold:
                row["fold"] = f
                rows.append(row)
        (tmp / f"fold-{f}").mkdir(parents=True)
        (tmp / f"fold-{f}" / "candidates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        for r in rows:
            fold_of[str(r["id"])] = f
            kept.append(by_id[str(r["id"])])
    (tmp / "folds.json").write_text(json.dumps({"fold_of": fold_of}))
    return kept


def test_reader_folds_resume_and_give_milestones(tmp_path: Path, scifact) -> None:
    claims = _tiny_run(tmp_path, read_claims(scifact.train))
    corpus = read_corpus(scifact.corpus)
    cfg = ReaderTrainConfig.tiny()
    run_reader_cv(tmp_path, claims, corpus, config=cfg, name="tiny", final=False, log=lambda _m: None)
    for f in (0, 1):
        report = json.loads((tmp_path / "models" / f"fold-{f}" / "reader-tiny" / "training.json").read_text())
        assert report["int8_check"]["pairs"] > 0
        assert report["int8_check"]["stance_argmax_agreement"] >= 0.9
    rows = read_reader_rows(tmp_path, claims, "tiny")
    assert sorted(str(r.claim.id) for r in rows) == sorted(str(c.id) for c in claims)
    docs = {doc_key(a.doc_id): a for a in corpus}
    for r in rows:
        for key in r.candidate_order:
            out = r.candidates[key]
            assert out.shape == (len(docs[key].sentences), 4)
            assert np.allclose(out[:, :3].sum(1), 1.0, atol=1e-3)
            assert ((out[:, 3] >= 0) & (out[:, 3] <= 1)).all()
        for key in r.claim.evidence:
            assert r.outputs(key) is not None  # every gold evidence abstract was read
    m = reader_milestones(rows)
    assert m["gold_evidence_abstracts"] >= len(claims)
    assert 0.0 <= m["top1_gold_reader"] <= 1.0 and 0.0 <= m["gold_label_accuracy"] <= 1.0
    # a rerun finds every fold read and does nothing
    before = {p: p.stat().st_mtime_ns for p in tmp_path.glob("fold-*/reader-tiny.jsonl")}
    run_reader_cv(tmp_path, claims, corpus, config=cfg, name="tiny", final=False, log=lambda _m: None)
    assert before == {p: p.stat().st_mtime_ns for p in tmp_path.glob("fold-*/reader-tiny.jsonl")}
