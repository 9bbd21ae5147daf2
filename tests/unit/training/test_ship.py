"""Shipping a run by command: the final folders copied, the decision in its folder, the cards' figures from
the manifests. The run here is built from the shipped weights' own files, laid out as an older run left
them (the decision in ``rationale/pipeline.toml``); the canaries are left to ``sciverify doctor``'s tests."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sciverify.decision.settings import DECISION_DIR, DECISION_TOML, load_decision
from sciverify.errors import ArtifactError
from sciverify.pipeline.config import PIPELINE_TOML, default_model_dir, tuned_config
from sciverify.training.ship import CARD_END, CARD_START, ship

ROOT = Path(__file__).resolve().parents[3]


def _older_run(tmp_path: Path) -> Path:
    """A run whose final directory holds the shipped selector and the label model's manifest and card,
    with the decision beside the selector as runs wrote it before it had a folder."""
    shipped = default_model_dir()
    final = tmp_path / "run" / "models" / "final-mpnet6"
    shutil.copytree(shipped / "rationale", final / "rationale")
    (final / "label").mkdir()
    for name in ("manifest.json", "MODEL_CARD.md"):
        shutil.copyfile(shipped / "label" / name, final / "label" / name)
    tuned_config(shipped).dump_toml(final / "rationale" / PIPELINE_TOML)  # with its [decision] table
    return tmp_path / "run"


def test_ship_copies_the_final_folders_moves_the_decision_and_writes_the_cards(tmp_path: Path) -> None:
    run = _older_run(tmp_path)
    dest = tmp_path / "weights"
    (dest / "reader").mkdir(parents=True)  # a reader the new run does not ship: it must not stay behind
    done = ship(run, dest, check=False)
    assert done.folders == ("rationale", "label") and done.removed == ("reader",)
    assert not (dest / "reader").exists()
    # the decision is in its own folder, and the same decision
    assert load_decision(dest / DECISION_DIR / DECISION_TOML) == tuned_config(default_model_dir()).decision
    assert "[decision]" not in (dest / "rationale" / PIPELINE_TOML).read_text()
    assert tuned_config(dest) == tuned_config(default_model_dir())
    # each card's figures are the manifest's, between the markers, after the author's prose
    manifest = json.loads((dest / "label" / "manifest.json").read_text())
    card = (dest / "label" / "MODEL_CARD.md").read_text()
    figures = card.split(CARD_START, 1)[1].split(CARD_END, 1)[0]
    assert manifest["command"] in figures
    assert manifest["data_sha256"]["claims_train.jsonl"] in figures
    f1 = manifest["metrics"]["cross_validated"]["abstract_rationalized"]
    assert f"| abstract_rationalized | {f1['f1']} | {f1['f1_ci95'][0]} to {f1['f1_ci95'][1]} |" in figures
    assert card.startswith((default_model_dir() / "label" / "MODEL_CARD.md").read_text().rstrip("\n"))
    # shipping again rewrites the figures in place: the card does not grow
    ship(run, dest, check=False)
    assert (dest / "label" / "MODEL_CARD.md").read_text() == card


def test_a_new_model_keeps_the_authors_card_of_the_one_it_replaces(tmp_path: Path) -> None:
    """A run's final folders carry no card: shipping a new label model keeps the card's prose (data,
    recipe, limitations) and writes only its figures from the new manifest."""
    run = _older_run(tmp_path)
    (run / "models" / "final-mpnet6" / "label" / "MODEL_CARD.md").unlink()
    dest = tmp_path / "weights"
    (dest / "label").mkdir(parents=True)
    (dest / "label" / "MODEL_CARD.md").write_text("# Label model\n\nThe author's prose.\n", encoding="utf-8")
    ship(run, dest, check=False)
    card = (dest / "label" / "MODEL_CARD.md").read_text()
    assert card.startswith("# Label model\n\nThe author's prose.\n") and CARD_START in card


def test_a_run_without_final_models_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "run" / "models" / "final-a" / "rationale").mkdir(parents=True)
    (tmp_path / "run" / "models" / "final-b").mkdir(parents=True)
    with pytest.raises(ArtifactError, match=r"expected one final-\* directory \(have: final-a, final-b\)"):
        ship(tmp_path / "run", tmp_path / "weights", check=False)
    argv = [sys.executable, str(ROOT / "scripts" / "ship"), str(tmp_path / "run"), "--final", "b"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    final = tmp_path / "run" / "models" / "final-b"
    assert done.stderr.strip().splitlines() == [
        f"error: {final}: no rationale/ folder: not a finished run's final models"
    ]
