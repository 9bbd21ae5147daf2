"""The Verifier refuses model files that do not belong together, with a message saying which."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sciverify.decision.settings import DecisionConfig
from sciverify.errors import ArtifactError
from sciverify.models.emit import EMIT_FEATURES, READER_EMIT_FEATURES, EmitModel
from sciverify.pipeline.config import PipelineConfig
from sciverify.pipeline.verify import Verifier


def _emit(names: tuple[str, ...]) -> EmitModel:
    n = len(names)
    return EmitModel((0.0,) * n, (1.0,) * n, (0.0,) * n, 0.0, names)


def _verifier(decision: DecisionConfig, emit: EmitModel, reader: Any = None) -> Verifier:
    config = replace(PipelineConfig(), decision=decision)
    # the check runs before any part is used, so stand-ins for the index and models are enough
    return Verifier(None, None, None, None, None, config, emit, reader=reader)  # type: ignore[arg-type]


def test_an_emit_model_without_the_readers_features_is_refused_for_a_reading_decision() -> None:
    reading = DecisionConfig(confidence="learned", reader_reads=3, label_source="reader")
    with pytest.raises(ArtifactError, match="without the reader's features"):
        _verifier(reading, _emit(EMIT_FEATURES), reader=object())
    plain = DecisionConfig(confidence="learned")
    with pytest.raises(ArtifactError, match="with the reader's features"):
        _verifier(plain, _emit(EMIT_FEATURES + READER_EMIT_FEATURES))
    assert _verifier(reading, _emit(EMIT_FEATURES + READER_EMIT_FEATURES), reader=object()).emit is not None
    assert _verifier(plain, _emit(EMIT_FEATURES)).emit is not None


def test_a_reader_that_only_lists_takes_the_emit_model_of_the_pipeline_without_it() -> None:
    lists = DecisionConfig(confidence="learned", reader_reads=5, reader_weight=0.5, reader_lists_only=True)
    assert _verifier(lists, _emit(EMIT_FEATURES), reader=object()).emit is not None
    with pytest.raises(ArtifactError, match="emission does not hear the reader"):
        _verifier(lists, _emit(EMIT_FEATURES + READER_EMIT_FEATURES), reader=object())
    with pytest.raises(ArtifactError, match="none was loaded"):
        _verifier(lists, _emit(EMIT_FEATURES))
