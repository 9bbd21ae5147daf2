"""Int8 export with named products left in float: the graph, its outputs, a pattern matching nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from sciverify.errors import ConfigError  # noqa: E402
from sciverify.models.label_torch import quantize_graph  # noqa: E402


def _two_layer_graph(path: Path) -> None:
    """x -> MatMul(W1) "layer.0/dense" -> MatMul(W2) "layer.1/output/dense" -> y, 64 wide."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.normal(size=(64, 64)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.normal(size=(64, 64)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="/layer.0/dense/MatMul"),
        helper.make_node("MatMul", ["h", "w2"], ["y"], name="/layer.1/output/dense/MatMul"),
    ]
    graph = helper.make_graph(
        nodes,
        "two",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 64])],
        initializer=[w1, w2],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def test_named_product_stays_float_and_the_rest_is_int8(tmp_path: Path) -> None:
    src = tmp_path / "float.onnx"
    _two_layer_graph(src)
    all_int8 = tmp_path / "int8.onnx"
    mixed = tmp_path / "mixed.onnx"
    assert quantize_graph(src, all_int8) == []
    kept = quantize_graph(src, mixed, float_nodes=(r"/output/dense/MatMul$",))
    assert kept == ["/layer.1/output/dense/MatMul"]

    def op_types(path: Path) -> list[str]:
        return [n.op_type for n in onnx.load(str(path)).graph.node]

    assert op_types(all_int8).count("MatMulInteger") == 2 and "MatMul" not in op_types(all_int8)
    mixed_ops = [(n.op_type, n.name) for n in onnx.load(str(mixed)).graph.node]
    assert ("MatMul", "/layer.1/output/dense/MatMul") in mixed_ops  # left in float
    assert [op for op, _ in mixed_ops].count("MatMulInteger") == 1  # the other product was quantised

    x = np.random.default_rng(1).normal(size=(8, 64)).astype(np.float32)
    exact = _run(src, x)
    err_mixed = np.abs(_run(mixed, x) - exact).mean()
    err_int8 = np.abs(_run(all_int8, x) - exact).mean()
    assert 0 < err_mixed < err_int8  # one rounded product drifts less than two


def test_pattern_matching_no_node_is_an_error(tmp_path: Path) -> None:
    src = tmp_path / "float.onnx"
    _two_layer_graph(src)
    with pytest.raises(ConfigError, match="matches no node"):
        quantize_graph(src, tmp_path / "out.onnx", float_nodes=("/layer.9/",))
    assert not (tmp_path / "out.onnx").exists()
