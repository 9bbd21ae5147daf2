"""The entailment stage that reads every auxiliary pair: SciNLI's and MultiNLI mismatched's loaders, and the
recipe's sets on the real auxiliary data."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sciverify.data.io import read_corpus
from sciverify.errors import DataFormatError
from sciverify.training.aux_pairs import SCINLI_LABELS, load_aux, load_scinli
from sciverify.training.cv.plan import ALL_AUX, all_label_recipe


def test_scinli_maps_only_its_entailment_to_support(tmp_path: Path) -> None:
    path = tmp_path / "dev.csv"
    path.write_text(
        ",id,sentence1,sentence2,label\n"
        "0,a,We train on news.,In other words we use newswire.,entailment\n"
        "1,b,The method is fast.,it is inaccurate on long inputs.,contrasting\n"
        "2,c,Labels are scarce.,we use distant supervision.,reasoning\n"
        "3,d,The corpus is large.,Parsing is hard.,neutral\n"
        "4,e,Unlabelled.,Row.,\n",
        encoding="utf-8",
    )
    pairs = load_scinli(path)
    assert [(p.claim, p.sentences, p.label) for p in pairs] == [
        ("In other words we use newswire.", ("We train on news.",), 0),
        ("it is inaccurate on long inputs.", ("The method is fast.",), 2),
        ("we use distant supervision.", ("Labels are scarce.",), 2),
        ("Parsing is hard.", ("The corpus is large.",), 2),
    ]
    assert set(SCINLI_LABELS.values()) == {0, 2}, "SciNLI gives no CONTRADICT"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="sentence1, sentence2, label"):
        load_scinli(path)


def test_every_auxiliary_set_loads_from_the_real_data(scifact) -> None:
    aux_dir = scifact.root.parent / "aux"
    corpus = read_corpus(scifact.corpus)
    sets = tuple((name, 0 if name != "corpus_direction" else 40) for name, _ in ALL_AUX)
    pairs = load_aux(aux_dir, sets, corpus, seed=13)
    counts = Counter(p.source for p in pairs)
    # every pair of each file (counts from the aux README, less duplicates and SciFact overlaps)
    assert counts["mnli_mismatched"] == 9832 and counts["scinli"] == 6000 and counts["mnli"] == 9815
    assert counts["snli"] + counts["snli_test"] == 9842 + 9824 and counts["corpus_direction"] == 40
    assert counts["pubmedqa"] < 1000, "the cross-domain check's PubMedQA claims are held out"
    assert set(counts) >= {"cad_snli", "breaking_nli", "scitail", "fever_symmetric", "evidence_inference"}
    assert Counter(p.label for p in pairs if p.source == "scinli") == {0: 1500, 2: 4500}


def test_the_recipe_reads_every_set_twice_and_its_tiny_twin_runs_the_new_loaders(tmp_path: Path) -> None:
    full = all_label_recipe(13, False, tmp_path / "aux.pt")
    assert full.aux_sets == ALL_AUX and full.aux_epochs == 2 and full.base == "mpnet6"
    tiny = all_label_recipe(13, True, tmp_path / "aux.pt")
    added = {"mnli_mismatched", "scinli", "pubmedqa_train", "corpus_direction"}
    assert added <= {name for name, _ in tiny.aux_sets}
    assert tiny.base == "minilm" and tiny.aux_checkpoint == str(tmp_path / "aux.pt")
