"""Engine selection and the in-process engine (the Ray engine runs in tests/e2e/scale)."""

from __future__ import annotations

import pytest

from sciverify.errors import ConfigError
from sciverify.pipeline.engines import LocalEngine, make_engine
from sciverify.retrieval.stages import SplitStage, run_in_process


def test_local_engine_maps_in_order_and_builds_the_stage_once():
    built = []

    def stage():
        built.append(1)
        return lambda block: [x * 2 for x in block]

    with make_engine("local") as engine:
        assert isinstance(engine, LocalEngine)
        assert list(engine.map(stage, ([1, 2], [3], [4, 5]))) == [[2, 4], [6], [8, 10]]
    assert built == [1]


def test_split_stage_passes_already_split_records_through():
    out = list(run_in_process(SplitStage(), [["First finding here. Second one, p < 0.05.", None]]))
    assert out == [[["First finding here.", "Second one, p < 0.05."], None]]


@pytest.mark.parametrize(
    ("name", "address", "message"),
    [
        ("spark", None, "--engine must be one of local, ray"),
        ("local", "auto", "--address needs --engine ray"),
    ],
)
def test_bad_engine_choices_are_config_errors(name, address, message):
    with pytest.raises(ConfigError, match=message):
        make_engine(name, address)
