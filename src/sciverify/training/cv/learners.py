"""The models a cross-fitted run trains, by registration: a learner is a recipe, a body and an artifact
contract, registered under a name in its role's registry.

``sciverify train --cv`` knows two roles besides the rationale selector (which every run trains first):

* the **label model** (``--label-base NAME``, :data:`LABEL_MODELS`): reads a claim and a candidate's best
  sentences and gives SUPPORT/CONTRADICT/NOT_ENOUGH_INFO; its fold outputs are ``labels-NAME.jsonl``;
* the **reader** (``--reader NAME``, :data:`READERS`): reads every (claim, sentence) pair and gives a
  per-sentence stance and P(rationale) (a per-sentence stance judge is a reader); its fold outputs are
  ``reader-NAME.jsonl``.

A :class:`Learner` says how to make its recipe (fixed before any fold is scored, from the run's seed),
how to train it into a directory (:class:`Fit`), how to load what it trained, and which file its training
writes last (:class:`Artifact`): a directory holding that file is finished, so a killed run resumes and a
finished model is never trained twice. The runner (:mod:`sciverify.training.cv.run`) does the rest: one
stage per fold, the out-of-fold outputs, the decision, the final model and its manifest. Adding a label
model or a reader is one registration (the module that holds it imported before the run), nothing in the
runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sciverify.data.records import Abstract, Claim
from sciverify.errors import ArtifactError
from sciverify.models.base import LabelPredictor, SentenceReader
from sciverify.registry import Registry
from sciverify.training.bases import BODIES
from sciverify.training.cv.outputs import label_rows, labels_file
from sciverify.training.cv.plan import (
    all_label_recipe,
    all_reader_recipe,
    direction_label_recipe,
    label_recipe,
    reader_recipe,
)
from sciverify.training.cv.reader import READER_WORK, read_fold, reader_file, train_fold_reader
from sciverify.training.label_config import LabelTrainConfig
from sciverify.training.reader_train import ReaderTrainConfig

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from sciverify.retrieval.index import CorpusIndex

#: A learner's recipe: a dataclass, so the run's summary can record it.
R = TypeVar("R", bound="DataclassInstance")
#: What a learner's model is to its role.
Model = LabelPredictor | SentenceReader

__all__ = [
    "LABEL",
    "LABEL_MODELS",
    "READER",
    "READERS",
    "Artifact",
    "Fit",
    "Learner",
    "Model",
    "Role",
    "RunData",
]


@dataclass(frozen=True)
class Artifact:
    """What a learner's training writes into its model directory.

    Attributes:
        done: the file it writes last: a directory that holds it is a finished model.
        files: the other files a finished directory holds (what a final model ships).
    """

    done: str
    files: tuple[str, ...] = ()

    def finished(self, where: Path) -> bool:
        """Whether ``where`` holds a finished model."""
        return (where / self.done).exists()


@dataclass(frozen=True)
class RunData:
    """What a run shares with every learner: the corpus (as a list and by doc id), the index, the folder of
    the run's model files, every claim's retrieved doc ids (hard negatives; empty until the candidates
    exist), where progress lines go, the device its models train on (``cpu`` or ``cuda``, resolved:
    :mod:`sciverify.training.device`), and whether the run is the CI-sized one. The device is the run's,
    not the recipe's: no recipe, summary or stamp holds it, so a run resumed on another machine accepts
    what the first one wrote."""

    corpus: Sequence[Abstract]
    docs: Mapping[str, Abstract]
    index: CorpusIndex
    models: Path
    retrieved: Mapping[str, Sequence[str]]
    log: Callable[[str], None]
    device: str = "cpu"
    tiny: bool = False


@dataclass(frozen=True)
class Fit:
    """One training: on ``train``, with ``held`` the claims it will score (empty for a final model, which
    scores none), into ``where``."""

    train: Sequence[Claim]
    held: Sequence[Claim]
    where: Path
    run: RunData


@dataclass(frozen=True)
class Learner(Generic[R]):
    """A model the cross-validation can train, in one role.

    Attributes:
        recipe: ``(seed, tiny, models folder) -> recipe``, a dataclass fixed before any fold is scored
            (written to the run's summary).
        train: ``(recipe, fit)`` trains into ``fit.where`` on ``fit.run.device``, writing
            :attr:`Artifact.done` last; it returns a training report to keep beside the fold outputs, or
            None.
        load: the model in a finished directory, as its role reads with it (a
            :class:`~sciverify.models.base.LabelPredictor` or a
            :class:`~sciverify.models.base.SentenceReader`).
        artifact: its files and its done marker.
        predictor: for a label model, the registered label predictor name that loads its directory at
            serving time (``label`` in the final ``pipeline.toml``).
    """

    recipe: Callable[[int, bool, Path], R]
    train: Callable[[R, Fit], Mapping[str, Any] | None]
    load: Callable[[Path], Model]
    artifact: Artifact
    predictor: str = "model"


@dataclass(frozen=True)
class Role:
    """A slot of the pipeline that learners fill: its registry, the folder its model takes in a model
    directory (``label/``, ``reader/``), its per-fold output file, and how a loaded model's outputs on
    held-out claims become that file's rows (``(model, held, candidate rows, run) -> rows``)."""

    name: str
    learners: Registry[Learner[Any]]
    outputs_file: Callable[[str], str]
    outputs: Callable[[Model, Sequence[Claim], Sequence[Mapping[str, Any]], RunData], list[dict[str, Any]]]

    def model_dir(self, learner: str) -> str:
        """The folder of a fold's model under ``models/fold-N/``."""
        return f"{self.name}-{learner}"


#: Label models by name (``--label-base``).
LABEL_MODELS: Registry[Learner[Any]] = Registry("label model")
#: Per-sentence readers by name (``--reader``).
READERS: Registry[Learner[Any]] = Registry("reader")


def _label_outputs(
    model: Model, held: Sequence[Claim], rows: Sequence[Mapping[str, Any]], run: RunData
) -> list[dict[str, Any]]:
    if not isinstance(model, LabelPredictor):
        raise ArtifactError(f"a label model's learner loaded a {type(model).__name__}, not a label predictor")
    return label_rows(model, run.index, held, [dict(r) for r in rows])


def _reader_outputs(
    model: Model, held: Sequence[Claim], rows: Sequence[Mapping[str, Any]], run: RunData
) -> list[dict[str, Any]]:
    if not isinstance(model, SentenceReader):
        raise ArtifactError(f"a reader's learner loaded a {type(model).__name__}, not a sentence reader")
    return read_fold(model, held, rows, run.docs)


LABEL = Role("label", LABEL_MODELS, labels_file, _label_outputs)
READER = Role("reader", READERS, reader_file, _reader_outputs)


# ---- the built-in learners --------------------------------------------------------------------------


def _label_recipe(base: str) -> Callable[[int, bool, Path], LabelTrainConfig]:
    def recipe(seed: int, tiny: bool, models: Path) -> LabelTrainConfig:
        return label_recipe(base, seed, tiny, None if tiny else models / f"aux-{base}.pt")

    return recipe


#: The label model aimed at the side of a finding: mpnet6 with direction pairs
#: (``plan.direction_label_recipe``).
DIRECTION_LABEL = "mpnet6-direction"


def _direction_recipe(retrieved_nei: bool) -> Callable[[int, bool, Path], LabelTrainConfig]:
    def recipe(seed: int, tiny: bool, models: Path) -> LabelTrainConfig:
        # both direction recipes share one auxiliary stage, so one checkpoint
        checkpoint = None if tiny else models / f"aux-{DIRECTION_LABEL}.pt"
        return direction_label_recipe(seed, tiny, checkpoint, retrieved_nei=retrieved_nei)

    return recipe


#: The label model whose entailment stage read every auxiliary pair (``plan.all_label_recipe``).
ALL_LABEL = "mpnet6-all"


def _all_recipe(seed: int, tiny: bool, models: Path) -> LabelTrainConfig:
    # a checkpoint even when tiny: CI runs the shared stage the way the full run trains it, alone first
    return all_label_recipe(seed, tiny, models / f"aux-{ALL_LABEL}.pt")


def _train_label(recipe: LabelTrainConfig, fit: Fit) -> Mapping[str, Any] | None:
    from sciverify.training.label_train import ensure_aux_checkpoint, train_label_model

    device = fit.run.device
    if recipe.aux_checkpoint:
        ensure_aux_checkpoint(recipe, fit.run.corpus, progress=True, device=device)
    return train_label_model(recipe, fit.train, fit.run.corpus, fit.where, progress=True, device=device)


def _load_label(where: Path) -> LabelPredictor:
    from sciverify.models.catalog import get_label_predictor

    return get_label_predictor("model", where)


def _reader_recipe(name: str) -> Callable[[int, bool, Path], ReaderTrainConfig]:
    def recipe(seed: int, tiny: bool, models: Path) -> ReaderTrainConfig:
        return reader_recipe(name, seed, tiny)

    return recipe


def _train_reader(recipe: ReaderTrainConfig, fit: Fit) -> None:
    run = fit.run
    work = run.models / READER_WORK
    train_fold_reader(
        recipe, fit.train, fit.held, run.docs, run.retrieved, fit.where, work, run.log, run.device
    )


def _all_reader_recipe(seed: int, tiny: bool, models: Path) -> ReaderTrainConfig:
    return all_reader_recipe(seed, tiny, models / f"aux-{ALL_LABEL}.pt")


def _train_reader_from_stage(recipe: ReaderTrainConfig, fit: Fit) -> None:
    """(R): the label model's entailment stage first (trained, waited for or found, as for the label
    model), then the reader from it."""
    from sciverify.training.label_train import ensure_aux_checkpoint

    stage = all_label_recipe(recipe.seed, fit.run.tiny, Path(str(recipe.start_checkpoint)))
    ensure_aux_checkpoint(stage, fit.run.corpus, progress=True, device=fit.run.device)
    _train_reader(recipe, fit)


def _load_reader(where: Path) -> SentenceReader:
    from sciverify.models.reader import ReaderModel

    return ReaderModel.load(where)


#: The label model's files: the int8 ONNX graph is written last.
LABEL_ARTIFACT = Artifact("model.onnx", ("config.json", "tokenizer.json"))
#: The reader's files: its training report is written after the graph has been checked.
READER_ARTIFACT = Artifact("training.json", ("model.onnx", "config.json", "tokenizer.json"))

for _body in BODIES.names():
    LABEL_MODELS.add(_body, Learner(_label_recipe(_body), _train_label, _load_label, LABEL_ARTIFACT))
for _suffix, _retrieved in (("", False), ("-retrieved", True)):
    _learner = Learner(_direction_recipe(_retrieved), _train_label, _load_label, LABEL_ARTIFACT)
    LABEL_MODELS.add(DIRECTION_LABEL + _suffix, _learner)
LABEL_MODELS.add(ALL_LABEL, Learner(_all_recipe, _train_label, _load_label, LABEL_ARTIFACT))
for _body in ("mpnet6", "minilm"):
    READERS.add(_body, Learner(_reader_recipe(_body), _train_reader, _load_reader, READER_ARTIFACT))
#: (R): the reader started from the label model's all-pairs entailment stage (``plan.all_reader_recipe``).
READERS.add(ALL_LABEL, Learner(_all_reader_recipe, _train_reader_from_stage, _load_reader, READER_ARTIFACT))
