"""sciverify: verify scientific claims against research abstracts, and score such systems.

``from sciverify import Verifier`` is the entry point: ``Verifier.load()`` opens the default index and the
shipped models, ``.verify(claim)`` judges one claim. The Verifier is imported on first use, so that
``import sciverify`` (the records, the readers and writers, the errors) stays light for a scorer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from sciverify.pipeline.verify import Verifier

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
    "Verifier",
    "__version__",
    "doc_key",
    "read_claims",
    "read_corpus",
    "read_predictions",
    "write_predictions",
]


def __getattr__(name: str) -> Any:
    """``sciverify.Verifier``, imported when first asked for (it pulls in numpy and the model runtimes)."""
    if name == "Verifier":
        from sciverify.pipeline.verify import Verifier

        return Verifier
    raise AttributeError(f"module 'sciverify' has no attribute {name!r}")
