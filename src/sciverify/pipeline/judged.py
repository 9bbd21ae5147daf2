"""What the evidence view reads of a judged claim and of the Verifier that judged it, as protocols: the
view (:mod:`sciverify.pipeline.evidence`) depends on these few members, not on the Verifier, so a test or
another caller can hand it anything that has them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from sciverify.data.records import PaperMeta

if TYPE_CHECKING:
    from sciverify.decision.rule import Pick
    from sciverify.models.base import LabelCalibration
    from sciverify.pipeline.config import PipelineConfig
    from sciverify.retrieval.base import Hit

__all__ = ["EvidenceIndex", "EvidenceSource", "JudgedClaim"]


class EvidenceIndex(Protocol):
    """What the evidence view reads of a corpus index: each row's title, sentences and paper details, and
    the manifest that says which corpus it holds."""

    @property
    def manifest(self) -> Mapping[str, Any]: ...

    def title(self, row: int) -> str: ...

    def sentences(self, row: int) -> Sequence[str]: ...

    def meta(self, row: int) -> PaperMeta | None: ...


class JudgedClaim(Protocol):
    """One claim as the Verifier judged it: its candidates, the emitted picks, the picks the evidence view
    adds and, from the models, the label probabilities and P(evidence) by candidate (None where the judge
    gives none)."""

    @property
    def hits(self) -> Sequence[Hit]: ...

    @property
    def picks(self) -> Sequence[Pick]: ...

    @property
    def shown(self) -> Sequence[Pick]: ...

    @property
    def scores(self) -> Sequence[npt.NDArray[np.float32]] | None: ...

    @property
    def probs(self) -> Mapping[int, npt.NDArray[np.float32]] | None: ...

    @property
    def emit_probs(self) -> Sequence[float] | None: ...


class EvidenceSource(Protocol):
    """What the evidence view reads of a Verifier: its index, its settings and its label calibrator."""

    @property
    def index(self) -> EvidenceIndex: ...

    @property
    def config(self) -> PipelineConfig: ...

    @property
    def label_calibrator(self) -> LabelCalibration | None: ...
