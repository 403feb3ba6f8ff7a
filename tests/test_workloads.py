"""Shipped networks (package data) and the loaders for DOSA's folder layouts."""
import re
from dataclasses import replace
from pathlib import Path

import pytest

from baco.problem.layer import Layer
from baco.tuner.workloads import load_network, network_names

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_networks_load_with_their_sizes():
    names = network_names()
    assert {"resnet50", "bert", "unet", "retinanet"} <= set(names)
    expected = {"resnet50": (24, 54, 4089184256), "bert": (5, 6, 757071872), "retinanet": (22, 27, None),
                "unet": (23, 23, None)}
    for name, (unique, total, macs) in expected.items():
        layers = load_network(name)
        assert (len(layers), sum(l.count for l in layers)) == (unique, total), name
        if macs:
            assert sum(l.macs * l.count for l in layers) == macs
    for name in names:
        assert all(l.macs > 0 and l.count >= 1 for l in load_network(name)), name


def test_folder_without_counts_merges_identical_layers(tmp_path):
    conv = "problem:\n  shape: cnn-layer\n  instance: {R: 3, S: 3, P: 17, Q: 17, C: 8, K: 16, N: 1}\n"
    (tmp_path / "a.yaml").write_text(conv)
    (tmp_path / "b.yaml").write_text(conv)
    (tmp_path / "dw.yaml").write_text("problem:\n  shape: dw-cnn-layer\n  instance: {R: 3, S: 3, P: 5, Q: 5, C: 32}\n")
    (tmp_path / "ews.yaml").write_text("problem:\n  instance: {S: 128}\n  shape: {name: elementwise}\n")
    (tmp_path / "layers.yaml").write_text("- a\n- ews\n- dw\n- b\n")
    layers = load_network(tmp_path)
    assert [(l.name, l.count, l.C, l.K) for l in layers] == [("a", 2, 8, 16), ("dw", 1, 1, 32)]


def test_every_shipped_layer_has_a_default_mapping():
    # DOSA's conv_1d writes Wstride 0 for its one-column images: read as 1, not a ZeroDivisionError
    # in the library's tiling (gemmini_default) or the search's heuristic start.
    from baco.tuner.default_mapping import default_mapping
    from baco.tuner.arch import DEFAULT_HARDWARE as hw
    for name in network_names():
        for layer in load_network(name):
            assert layer.Wstride >= 1 and layer.Hstride >= 1, (name, layer)
            default_mapping(layer, hw)
    with pytest.raises(ValueError, match="Wstride must be >= 1, got 0"):
        Layer(P=4, Q=4, S=3, Wstride=0)


def test_unmodelled_shape_and_unknown_network_are_errors():
    with pytest.raises(ValueError, match="transpose-cnn-layer"):
        load_network(ROOT / "baco" / "data" / "workloads" / "conv_transpose")
    with pytest.raises(FileNotFoundError, match="resnet50"):
        load_network("no_such_net")


def test_product_code_never_reads_the_shared_folder():
    offenders = [str(p.relative_to(ROOT)) for d in ("baco", "examples", "benchmarks") for p in (ROOT / d).rglob("*.py")
                 if re.search(r"""["']shared["']|\.\./shared""", p.read_text())]
    assert offenders == []


def test_torch_attention_modules_become_their_matmuls():
    import torch
    from baco.tuner.workloads import layers_from_torch

    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
            layer = torch.nn.TransformerEncoderLayer(32, 2, dim_feedforward=48, batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

        def forward(self, x):
            y, _ = self.mha(x, x, x)
            q = y.view(1, 17, 4, 8).transpose(1, 2)
            z = torch.nn.functional.scaled_dot_product_attention(q, q, q)
            return self.enc(z.transpose(1, 2).reshape(1, 17, 32))

    got = {(l.P, l.C, l.K, l.N): l.count for l in layers_from_torch(Attn(), torch.zeros(1, 17, 32))}
    assert got == {(17, 32, 32, 1): 4 + 2 * 4,          # q/k/v/out projections: mha + 2 encoder layers
                   (17, 8, 17, 4): 2, (17, 17, 8, 4): 2,  # mha and sdpa: QKᵀ and A·V, 4 heads
                   (17, 16, 17, 2): 2, (17, 17, 16, 2): 2,  # encoder layers: 2 heads of 16
                   (17, 32, 48, 1): 2, (17, 48, 32, 1): 2}  # feed-forward


def test_torchvision_resnet50_is_the_shipped_resnet50():
    from baco.tuner.workloads import layers_from_model_spec
    traced = layers_from_model_spec("torchvision.models:resnet50", (1, 3, 224, 224))
    shipped = load_network("resnet50")
    # the same shapes; the traced convolutions and linear layer carry the bias the compiled model
    # gives them and their padding (the 3x3 and 7x7 convs), DOSA's workload neither
    assert all(l.bias for l in traced) and not any(l.bias for l in shipped)
    assert {l.padding for l in traced if l.R > 1} == {1, 3} and not any(l.padding for l in shipped)
    assert {replace(l, bias=False, padding=0).key: l.count for l in traced} == {l.key: l.count for l in shipped}


def test_model_spec_errors():
    from baco.tuner.workloads import layers_from_model_spec
    with pytest.raises(ValueError, match="MODULE:CALLABLE"):
        layers_from_model_spec("torchvision.models.resnet50", (1, 3, 8, 8))
    with pytest.raises(ValueError, match="no callable"):
        layers_from_model_spec("baco.tuner.torch_models:nothing", (1, 3, 8, 8))
