"""Int8 graphs that give one answer on every CPU, and the float graphs they are checked against.

``onnxruntime.quantization.quantize_dynamic`` with int8 weights writes ``MatMulInteger`` nodes that multiply
uint8 activations by int8 weights. onnxruntime computes that product with a different kernel on each CPU:
VNNI and AMX accumulate in 32 bits, but plain AVX2 (and AVX-512 without VNNI) use ``VPMADDUBSW``, which
adds two u8 x s8 products into a saturating 16-bit lane (255 x 127 x 2 = 64,770 > 32,767). On the mpnet6
label model and reader the saturation is the whole answer: on an AVX2-only EPYC both gave the same
probabilities whatever they read (docs/cpu-conformance.md).

The fix here changes how the weights are written, not what they are: an int8 weight ``q`` with zero point
0 becomes the uint8 ``q + 128`` with zero point 128. The graph then multiplies uint8 by uint8, which every
onnxruntime kernel (SSE, AVX2, AVX-512, VNNI, AMX, ARM) computes with 16-bit operands and 32-bit sums, so
nothing saturates, and the integer products are exactly those a VNNI CPU computed before: the answers the
cross-validated figures were measured with, now on every CPU.

Where the CPU's own kernel cannot saturate (AVX-512 VNNI, which AMX CPUs have too: ``VPDPBUSD`` adds
u8 x s8 products in 32 bits), the loader turns the weights back into int8 in memory (:func:`make_signed`):
the same integer products, through onnxruntime's faster u8 x s8 kernel (x1.6 per label-model call on an
AVX-512 VNNI EPYC, ``benchmarks/bench_int8.py``). The canaries still check the answers at every load.

Two float graphs serve the checks (:mod:`sciverify.models.conformance`): :func:`reference_graph` computes the
int8 graph's own arithmetic (the same quantised activations and weights) in float, with no integer kernel,
so it is what a correct kernel must give; :func:`float_graph` keeps the weights' int8 values but leaves the
activations in float, so its distance to the shipped graph is the quantisation error itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto, TensorProto

__all__ = [
    "INT8_OP",
    "Int8Graph",
    "cpu_features",
    "float_graph",
    "inspect_graph",
    "make_exact",
    "make_signed",
    "reference_graph",
    "signed_products_exact",
]

#: The node quantize_dynamic writes for a quantised matrix product.
INT8_OP = "MatMulInteger"


@dataclass(frozen=True)
class Int8Graph:
    """What a graph's integer products multiply.

    Attributes:
        int8_products: ``MatMulInteger`` nodes in the graph.
        signed_weights: those whose weight is int8, which saturate on CPUs without VNNI.
    """

    int8_products: int
    signed_weights: int

    @property
    def exact(self) -> bool:
        """True when no product can saturate on any CPU (no signed int8 weight)."""
        return self.signed_weights == 0


def _initializers(model: ModelProto) -> dict[str, TensorProto]:
    return {t.name: t for t in model.graph.initializer}


def inspect_graph(model: ModelProto) -> Int8Graph:
    """Count the graph's integer products and those with int8 (saturating) weights."""
    from onnx import TensorProto

    inits = _initializers(model)
    nodes = [n for n in model.graph.node if n.op_type == INT8_OP]
    signed = sum(1 for n in nodes if n.input[1] in inits and inits[n.input[1]].data_type == TensorProto.INT8)
    return Int8Graph(len(nodes), signed)


def make_exact(model: ModelProto) -> int:
    """Rewrite, in place, every int8 weight of a ``MatMulInteger`` (with its zero point) as uint8 plus 128;
    returns how many weights changed. Exact: ``(q + 128) - (z + 128) == q - z`` for every element, so the
    graph's integer products are unchanged where they were computed exactly, and exact everywhere now."""
    from onnx import TensorProto, numpy_helper

    inits = _initializers(model)
    changed: set[str] = set()
    weights = 0
    for node in model.graph.node:
        if node.op_type != INT8_OP:
            continue
        weight = node.input[1]
        zero = node.input[3] if len(node.input) > 3 else ""
        if weight not in inits or inits[weight].data_type != TensorProto.INT8 or weight in changed:
            continue
        if not zero:  # no zero point input: add one (uint8 128), as the weights move by 128
            zero = weight + "_zero_point_u8"
            cols = numpy_helper.to_array(inits[weight]).shape[-1]
            model.graph.initializer.append(numpy_helper.from_array(np.full(cols, 128, np.uint8), zero))
            while len(node.input) < 4:
                node.input.append("")
            node.input[3] = zero
            changed.add(zero)
        weights += 1
        for name in (weight, zero):
            if name in changed:
                continue
            tensor = inits[name]
            values = numpy_helper.to_array(tensor).astype(np.int16) + 128
            tensor.CopyFrom(numpy_helper.from_array(values.astype(np.uint8), name))
            changed.add(name)
    # shapes and types recorded for the old tensors would now be wrong; onnxruntime infers them again
    _drop_value_info(model, changed)
    return weights


def make_signed(model: ModelProto) -> int:
    """Undo :func:`make_exact` in place: every uint8 weight of a ``MatMulInteger`` (with its zero point)
    becomes the int8 ``q - 128``; returns how many weights changed. The products are the same numbers;
    only a CPU for which :func:`signed_products_exact` holds may run the result."""
    from onnx import TensorProto, numpy_helper

    inits = _initializers(model)
    changed: set[str] = set()
    weights = 0
    for node in model.graph.node:
        if node.op_type != INT8_OP or len(node.input) < 4 or not node.input[3]:
            continue
        weight, zero = node.input[1], node.input[3]
        if weight not in inits or zero not in inits or inits[weight].data_type != TensorProto.UINT8:
            continue
        weights += weight not in changed
        for name in (weight, zero):
            if name in changed:
                continue
            values = numpy_helper.to_array(inits[name]).astype(np.int16) - 128
            inits[name].CopyFrom(numpy_helper.from_array(values.astype(np.int8), name))
            changed.add(name)
    _drop_value_info(model, changed)
    return weights


def signed_products_exact() -> bool:
    """True when onnxruntime multiplies uint8 by int8 in 32-bit sums on this CPU: x86-64 with AVX-512
    VNNI. Read from the CPU itself (numpy's run-time detection), so an emulated CPU answers for itself;
    CPUs with only AVX-VNNI are left on the uint8 form, which is exact everywhere."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    return cpu_features().get("AVX512VNNI", False)


def cpu_features() -> dict[str, bool]:
    """The CPU's features as numpy detected them at run time (``cpuid`` on x86), by numpy's names."""
    import importlib

    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # numpy 1.x
        umath = importlib.import_module("numpy.core._multiarray_umath")
    return {str(k): bool(v) for k, v in getattr(umath, "__cpu_features__", {}).items()}


def _drop_value_info(model: ModelProto, names: set[str]) -> None:
    keep = [v for v in model.graph.value_info if v.name not in names]
    del model.graph.value_info[:]
    model.graph.value_info.extend(keep)


def _zero_point(inits: dict[str, TensorProto], name: str) -> np.ndarray:
    from onnx import numpy_helper

    return numpy_helper.to_array(inits[name]).astype(np.float32) if name else np.zeros((), np.float32)


def reference_graph(model: ModelProto) -> ModelProto:
    """The int8 graph's arithmetic in float: every ``MatMulInteger`` becomes a float ``MatMul`` of the same
    quantised values minus their zero points. Products of 8-bit integers and their sums over a few
    thousand terms are exact or within float32's relative rounding (1e-7), so this is what a correct
    kernel gives, computed without one."""
    import onnx
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    inits = _initializers(out)
    nodes: list[NodeProto] = []
    renamed: set[str] = set()
    made: set[str] = set()
    for node in out.graph.node:
        if node.op_type != INT8_OP:
            nodes.append(node)
            continue
        a, w = node.input[0], node.input[1]
        a_zero = node.input[2] if len(node.input) > 2 else ""
        w_zero = node.input[3] if len(node.input) > 3 else ""
        weight = numpy_helper.to_array(inits[w]).astype(np.float32) - _zero_point(inits, w_zero)
        wname, af, az, ac = w + "_ref", a + "_ref_f", a + "_ref_zf", a + "_ref_c"
        if wname not in inits:
            tensor = numpy_helper.from_array(weight.astype(np.float32), wname)
            out.graph.initializer.append(tensor)
            inits[wname] = tensor
        if not a_zero:
            ac = af
        if ac not in made:  # q, k and v read one quantised activation: convert it once
            nodes.append(helper.make_node("Cast", [a], [af], to=onnx.TensorProto.FLOAT))
            if a_zero:
                nodes.append(helper.make_node("Cast", [a_zero], [az], to=onnx.TensorProto.FLOAT))
                nodes.append(helper.make_node("Sub", [af, az], [ac]))
            made.add(ac)
        # the node's int32 output becomes float; the Cast to float that follows it passes it on
        nodes.append(helper.make_node("MatMul", [ac, wname], [node.output[0]], name=node.name + "_ref"))
        renamed.add(node.output[0])
    _replace_nodes(out, nodes)
    _drop_value_info(out, renamed)
    _prune(out)
    return out


def float_graph(model: ModelProto) -> ModelProto:
    """The graph with float activations and the int8 weights dequantised: each ``DynamicQuantizeLinear ->
    MatMulInteger -> Cast -> Mul(scale)`` chain becomes one float ``MatMul`` on the unquantised input.
    Its distance to the int8 graph is what quantising the activations costs (the weights are the same)."""
    import onnx
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    inits = _initializers(out)
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[NodeProto]] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    replace: dict[int, NodeProto] = {}
    drop: set[int] = set()
    for node in graph.node:
        if node.op_type != INT8_OP:
            continue
        quantize = producer[node.input[0]]
        cast = _only(consumers.get(node.output[0], []), "Cast")
        rescale = _only(consumers.get(cast.output[0], []), "Mul")
        scales = producer[next(i for i in rescale.input if i != cast.output[0])]
        if quantize.op_type != "DynamicQuantizeLinear" or scales.op_type != "Mul":
            raise ValueError(f"{node.name}: not the chain quantize_dynamic writes")
        w_scale = next(i for i in scales.input if i in inits)
        w_zero = node.input[3] if len(node.input) > 3 else ""
        weight = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32) - _zero_point(inits, w_zero)
        weight = weight * numpy_helper.to_array(inits[w_scale]).astype(np.float32)
        wname = node.input[1] + "_float"
        graph.initializer.append(numpy_helper.from_array(weight.astype(np.float32), wname))
        replace[id(node)] = helper.make_node(
            "MatMul", [quantize.input[0], wname], [rescale.output[0]], name=node.name + "_float"
        )
        drop.update((id(cast), id(rescale)))
    nodes = [replace.get(id(n), n) for n in graph.node if id(n) not in drop]
    _replace_nodes(out, nodes)
    _prune(out)
    return out


def _only(nodes: list[NodeProto], op: str) -> NodeProto:
    if len(nodes) != 1 or nodes[0].op_type != op:
        raise ValueError(f"expected one {op} after the integer product, found {[n.op_type for n in nodes]}")
    return nodes[0]


def _replace_nodes(model: ModelProto, nodes: list[NodeProto]) -> None:
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _prune(model: ModelProto) -> None:
    """Drop nodes whose outputs nothing reads, then initializers no node reads."""
    graph = model.graph
    outputs = {o.name for o in graph.output}
    while True:
        used = {i for n in graph.node for i in n.input} | outputs
        live = [n for n in graph.node if any(o in used for o in n.output)]
        if len(live) == len(graph.node):
            break
        _replace_nodes(model, live)
    used = {i for n in graph.node for i in n.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
