"""sciverify: verify scientific claims against research abstracts, and score such systems."""

from __future__ import annotations

from sciverify._version import __version__
from sciverify.data.io import read_claims, read_corpus, read_predictions, write_predictions
from sciverify.data.records import (
    Abstract,
    AbstractPrediction,
    Claim,
    EvidenceSet,
    Label,
    Prediction,
    doc_key,
)
from sciverify.errors import (
    ArtifactError,
    ConfigError,
    DataFormatError,
    InputError,
    SciverifyError,
)

__all__ = [
    "Abstract",
    "AbstractPrediction",
    "ArtifactError",
    "Claim",
    "ConfigError",
    "DataFormatError",
    "EvidenceSet",
    "InputError",
    "Label",
    "Prediction",
    "SciverifyError",
    "__version__",
    "doc_key",
    "read_claims",
    "read_corpus",
    "read_predictions",
    "write_predictions",
]
