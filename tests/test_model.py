"""Whole models (baco.model, baco.compile_model): captured with torch.export, quantised to int8,
run as Gemmini kernel launches (+ CPU ops) on the host-JIT model, bit-exact against the
independent numpy reference of the quantised graph (baco.model.reference)."""
import json
import linecache
import os

import numpy as np
import pytest
import torch

import baco
from baco.errors import CompilationError
from baco.model.compile import quantization_error, tensor_errors
from baco.model.quantize import calibration_inputs
from baco.model.zoo import MLP1, mlp, seeded_inputs, small_cnn, torchvision_model, with_bn_statistics

nn = torch.nn


def assert_bit_exact(compiled, xs):
    for x in xs:
        r = compiled.check(x)
        assert r["bit_exact"], f"{r['mismatches']} mismatches, first in tensor {r['first_mismatch']}"
        assert np.abs(r["output"]).max() > 0        # not a constant output


def test_mlp_bit_exact_and_close_to_float():
    """mlp1 of gemmini-rocc-tests scaled down: 784-256-128-10, batch 8, ReLU."""
    model = mlp([784, 256, 128, 10])
    x = torch.randn(8, 784)
    compiled = baco.compile_model(model, x)
    assert [op.kind for op in compiled.graph.ops] == ["linear"] * 3
    assert [op.q["relu"] for op in compiled.graph.ops] == [True, True, False]
    assert all(layer.runs_on == "gemmini" for layer in compiled.layers)
    assert_bit_exact(compiled, seeded_inputs((8, 784)))
    err = quantization_error(model, compiled, seeded_inputs((8, 784), 4, seed=7))
    assert err["cosine"] > 0.99 and err["top1_agreement"] >= 0.9, err
    per_op = tensor_errors(compiled, x)
    assert [kind for kind, _, _ in per_op] == ["linear"] * 3 and all(c > 0.99 for _, _, c in per_op), per_op


def test_mlp_one_elf_on_the_iss(tmp_path):
    """target="iss": the whole model linked into one self-checking ELF (baco.codegen.program) and
    run on the RISC-V ISS; its exit code fails on a wrong expected output."""
    from baco.codegen.program import run_program
    model = mlp([784, 256, 128, 10])
    x = torch.randn(8, 784)
    compiled = baco.compile_model(model, x, calibrate=2)
    np.testing.assert_array_equal(compiled(x, target="iss"), compiled.reference(x))
    build = compiled.build_elf(tmp_path / "mlp.elf", x)
    run = run_program(build)
    assert run.passed and list(run.step_cycles) == ["s000_linear", "s001_linear", "s002_linear"]
    wrong = compiled.reference(x)
    wrong[0, 0] ^= 1
    assert not run_program(compiled.build_elf(tmp_path / "wrong.elf", x, expected=wrong)).passed


def issued_commands(launch) -> list:
    """The names of the commands a launch's CPU issues (not what its hardware loops expand to)."""
    from tests.issued import IssuedCommands
    issued = []
    kernel = launch.kernel.compile(*launch.args, target="sim", **launch.options)
    kernel.run(launch.grid, launch.runtime_args(), model=IssuedCommands(issued))
    return issued


def test_ragged_k_linear_weights_are_padded_to_whole_blocks(tmp_path):
    """A linear layer's weight is stored (and linked into the ELF) with zero rows up to whole DIM
    blocks, so each ragged K step is one LOOP_WS (baco.passes.loop_ws); bit-exact on sim and the ISS."""
    from baco.codegen.program import run_program
    from baco.gemmini.schedule import padded_rows
    model = mlp([100, 33, 10])
    x = torch.randn(8, 100)
    compiled = baco.compile_model(model, x, calibrate=2)
    buffers = compiled.lowered.buffers
    for op, K in zip(compiled.graph.ops, (100, 33)):
        w = buffers[f"{op.output}.weight"]
        assert w.shape == (padded_rows(K, 16), op.q["weight"].shape[1])
        np.testing.assert_array_equal(w[:K], op.q["weight"])
        assert not w[K:].any()
    assert_bit_exact(compiled, seeded_inputs((8, 100)))
    for step in compiled.lowered.steps:     # one LOOP_WS a K step: no split head, no explicit B
        launch = step.launches[0]
        K, s = launch.args[5], launch.options["schedule"]
        issued = issued_commands(launch)
        assert issued.count("loop_ws") == np.prod(launch.grid) * -(-K // s.block_k)
        assert not any(name.startswith("mvin") for name in issued)
    np.testing.assert_array_equal(compiled(x, target="iss"), compiled.reference(x))
    assert run_program(compiled.build_elf(tmp_path / "ragged.elf", x)).passed


def test_quantised_parameters_follow_gemmini():
    """int32 bias = round(b / (s_in s_w)), requantisation scale float32(s_in s_w / s_out), int8 weights."""
    model = mlp([33, 17])
    x = torch.randn(5, 33)
    compiled = baco.compile_model(model, x, calibrate=3)
    op = compiled.graph.ops[0]
    s_in, s_out = compiled.input_scale, compiled.output_scale
    s_w = op.q["weight_scale"]
    assert op.q["weight"].dtype == np.int8 and op.q["weight"].shape == (33, 17)
    np.testing.assert_array_equal(op.q["bias"], np.rint(model[0].bias.detach().double().numpy() / (s_in * s_w)))
    assert op.q["scale"] == float(np.float32(s_in * s_w / s_out))
    assert_bit_exact(compiled, seeded_inputs((5, 33)))


def test_int8_input_and_argument_errors():
    model = mlp([20, 16])
    x = torch.randn(3, 20)
    compiled = baco.compile_model(model, x, calibrate=2)
    q = compiled.quantize_input(x)
    np.testing.assert_array_equal(compiled(q), compiled(x))
    with pytest.raises(TypeError, match="int8"):
        compiled(q.astype(np.int16))
    with pytest.raises(ValueError, match="shape"):
        compiled(torch.randn(4, 20))
    with pytest.raises(TypeError, match="model"):
        baco.compile_model(lambda v: v, x)
    with pytest.raises(ValueError, match="calibrate"):
        baco.compile_model(model, x, calibrate=0)
    with pytest.raises(ValueError, match="target"):
        baco.compile_model(model, x, target="fpga")


def test_calibration_inputs():
    x = torch.randn(2, 3)
    batches = calibration_inputs(x, 3)
    assert len(batches) == 3 and batches[0] is x
    assert torch.equal(batches[1], calibration_inputs(x, 3)[1])       # seeded
    with pytest.raises(ValueError, match="shape"):
        calibration_inputs(x, [torch.randn(3, 3)])


def test_small_cnn_bit_exact():
    """A ragged 17x15 input, batch 2: BN folded, max-pool fused into conv1's mvout, the residual
    add on Gemmini, the average pool on the CPU, flatten a view."""
    model = small_cnn()
    x = torch.randn(2, 3, 17, 15)
    compiled = baco.compile_model(model, x, calibrate=4)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds == ["conv", "conv", "add", "conv", "adaptive_avg_pool", "reshape", "linear"]
    assert compiled.graph.ops[0].q["pool"] == dict(kernel=2, stride=2, padding=0)
    assert compiled.graph.tensors[compiled.graph.ops[0].output].shape == (2, 8, 7, 16)      # NHWC
    assert [layer.runs_on for layer in compiled.layers] == ["gemmini"] * 4 + ["cpu", "gemmini"]
    assert compiled.layers[0].kernels == ["conv2d_pool_kernel"]
    assert_bit_exact(compiled, seeded_inputs((2, 3, 17, 15)))
    err = quantization_error(model, compiled, seeded_inputs((2, 3, 17, 15), 4, seed=3))
    assert err["cosine"] > 0.98, err
    x = seeded_inputs((2, 3, 17, 15))[0]
    np.testing.assert_array_equal(compiled(x, target="iss"), compiled.reference(x))     # one ELF, CPU op inside


def test_design_schedules_and_config():
    """design=: every layer on the design's GemminiConfig, the layers the design lists (matched by
    shape) with its schedules - output-stationary ones included, whose array saturation the
    reference follows - and the others with the kernels' defaults."""
    from dataclasses import asdict

    from baco.gemmini.config import GemminiConfig
    from baco.gemmini.schedule import GemmSchedule
    model = small_cnn()
    x = torch.randn(2, 3, 17, 15)
    default = baco.compile_model(model, x, calibrate=2)
    layers = {step.op.output: step.layer for step in default.lowered.steps if getattr(step, "layer", None)}
    conv2, conv3, fc = (layers[op.output] for op in default.graph.ops if op.kind in ("conv", "linear")
                        and not op.q.get("pool"))
    config = GemminiConfig.from_capacity(8, 64, 32)
    schedules = [GemmSchedule(7, 16, 8, "WS", True, rows=2), GemmSchedule(4, 16, 8, "OS", False),
                 GemmSchedule(8, 16, 16, "OS", True)]
    design = dict(gemmini_config=config.to_dict(), layers=[
        dict(name=f"l{i}", count=1, layer={k: v for k, v in asdict(layer).items() if k not in ("name", "count")},
             schedule=sched.to_dict()) for i, (layer, sched) in enumerate(zip((conv2, conv3, fc), schedules))])
    compiled = baco.compile_model(model, x, design=design, calibrate=2)
    assert compiled.config == config
    assert [layer.schedule_source for layer in compiled.layers if layer.runs_on == "gemmini"] == \
        ["default", "tuned", "default", "tuned", "tuned"]
    assert [op.q.get("os_k_block") for op in compiled.graph.ops if op.kind in ("conv", "linear")] == [None, None, 8, 16]
    assert_bit_exact(compiled, seeded_inputs((2, 3, 17, 15)))


@pytest.mark.slow
def test_design_from_baco_tune(tmp_path):
    """A `baco tune --torch` result of the same model, compiled with design=DIR."""
    from baco.tuner.cli import main as tune
    assert tune(["--torch", "baco.model.zoo:small_cnn", "--input-shape", "2,3,17,15", "--steps", "10",
                 "--out", str(tmp_path), "--quiet"]) == 0
    model = small_cnn()
    compiled = baco.compile_model(model, torch.randn(2, 3, 17, 15), design=tmp_path, calibrate=2)
    design = json.loads((tmp_path / "result.json").read_text())
    # each layer runs as the design marks it: its tuned schedule (conv1, fused with its max-pool, the pooled
    # kernel's nearest one) or its kernel's default program
    marked = {e["name"]: "default" if e.get("schedule_source") == "default" else "tuned" for e in design["layers"]}
    ran = {layer.source.split()[0]: layer.schedule_source for layer in compiled.layers if layer.kind in ("conv", "linear")}
    assert ran == marked and set(marked) == {"conv1", "conv2", "conv3", "fc"}
    assert compiled.config.dim == design["gemmini_config"]["dim"]
    assert_bit_exact(compiled, seeded_inputs((2, 3, 17, 15)))


# 28 CPU s (twenty compiled conv kernels): the default run's whole CNN is test_small_cnn_bit_exact (conv, a fused
# max-pool, a residual add on Gemmini, the CPU's average pool, a linear); resnet18 at full depth runs with -m slow
@pytest.mark.slow
def test_resnet18_bit_exact():
    model = torchvision_model("resnet18", (2, 3, 32, 32))
    x = torch.randn(1, 3, 32, 32)
    compiled = baco.compile_model(model, x, calibrate=2)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds.count("conv") == 20 and kinds.count("add") == 8 and "max_pool" not in kinds
    assert compiled.graph.ops[0].q["pool"] == dict(kernel=3, stride=2, padding=1)     # the stem's max-pool
    assert_bit_exact(compiled, [x])
    err = quantization_error(model, compiled, seeded_inputs((1, 3, 32, 32), 4, seed=3))
    assert err["cosine"] > 0.95, err        # 0.963 measured (per-tensor int8, 2 calibration inputs)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_model_on_the_iss(name, tmp_path):
    """ResNet-18 and MobileNetV2 at 1x3x32x32 as one ELF on the ISS, bit-exact."""
    from baco.codegen.program import run_program
    model = torchvision_model(name, (2, 3, 32, 32))
    x = torch.randn(1, 3, 32, 32)
    compiled = baco.compile_model(model, x, calibrate=2)
    run = run_program(compiled.build_elf(tmp_path / f"{name}.elf", x))
    assert run.passed, run.console[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2", "mobilenet_v3_small"])
def test_mobilenet_bit_exact(name):
    """Depthwise convs on the depthwise kernel, relu6 as ReLU + saturation, hardswish/hardsigmoid
    tables, squeeze-excite multiplies and average pools on the CPU."""
    model = torchvision_model(name, (2, 3, 32, 32))
    x = torch.randn(1, 3, 32, 32)
    compiled = baco.compile_model(model, x, calibrate=4)
    kinds = {op.kind for op in compiled.graph.ops}
    assert "depthwise" in kinds and "add" in kinds
    if name == "mobilenet_v3_small":
        assert {"lut", "mul_channel", "adaptive_avg_pool"} <= kinds
    assert_bit_exact(compiled, [x])


class Zoo(nn.Module):
    """One of each remaining operator: strided/dilated/grouped/depthwise convs, activation tables,
    standalone max-pools (one in ceil_mode), squeeze-excite, an average pool in ceil_mode,
    concatenation of two scales, a flatten of an image that is not 1x1 (a permute to torch's
    order), dropout, a spatial mean, an add of two linears."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.grouped = nn.Conv2d(8, 12, 3, padding=2, dilation=2, groups=2)
        self.dw = nn.Conv2d(12, 12, 3, stride=2, padding=1, groups=12, bias=False)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(24 * 2 * 2, 5)
        self.head = nn.Linear(24, 5)

    def forward(self, x):
        x = nn.functional.hardswish(self.conv1(x))
        x = nn.functional.max_pool2d(x, 3, stride=2, padding=1)
        y = nn.functional.relu6(self.grouped(x))
        y = torch.sigmoid(self.dw(y))
        y = y * nn.functional.hardsigmoid(nn.functional.adaptive_avg_pool2d(y, 1))
        z = nn.functional.avg_pool2d(y, 2, ceil_mode=True, count_include_pad=False)      # 5x5 -> 3x3
        z = nn.functional.max_pool2d(z, 2, ceil_mode=True)                               # 3x3 -> 2x2
        z = torch.cat([z, nn.functional.silu(z)], dim=1)
        return self.fc(self.drop(torch.flatten(z, 1))) + self.head(z.mean((2, 3)))


def test_operator_zoo_bit_exact():
    model = with_bn_statistics(Zoo())
    x = torch.randn(2, 3, 37, 33)
    compiled = baco.compile_model(model, x, calibrate=4)
    kinds = [op.kind for op in compiled.graph.ops]
    for kind in ("conv", "depthwise", "lut", "max_pool", "mul_channel", "adaptive_avg_pool", "avg_pool", "cat",
                 "permute", "reshape", "linear"):
        assert kind in kinds, kind
    grouped = compiled.graph.ops[kinds.index("conv", 1)]
    assert grouped.attrs["groups"] == 2 and grouped.q["relu"]
    assert_bit_exact(compiled, seeded_inputs((2, 3, 37, 33)))


class Scores(nn.Module):
    """Attention scores: two projections of a (B, T, D) input multiplied as activations (bmm)."""

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(24, 20), nn.Linear(24, 20)

    def forward(self, x):
        return torch.bmm(self.q(x), self.k(x).permute(0, 2, 1))


def test_bmm_of_two_activations():
    torch.manual_seed(0)
    model = Scores().eval()
    x = torch.randn(3, 17, 24)
    compiled = baco.compile_model(model, x, calibrate=2)
    # the permute is a view: each batch's Kᵀ is read column-major (transposed by the array), no copy
    assert [op.kind for op in compiled.graph.ops] == ["linear", "linear", "matmul"]
    assert compiled.graph.ops[-1].q["b_view"] == ((3, 20, 17), (340, 1, 20), 0)
    assert len(compiled.lowered.steps[-1].launches) == 3        # one GEMM per batch
    assert_bit_exact(compiled, seeded_inputs((3, 17, 24)))


def encoder_layer(d=32, heads=4, ff=48, seed=0):
    """One post-norm transformer encoder layer as BERT's (nn.MultiheadAttention, GELU), small."""
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ff, activation="gelu",
                                       batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False).eval()


def test_encoder_layer_reads_heads_in_place():
    """BERT's encoder layer at a ragged sequence, batch 1: scaled_dot_product_attention split into
    Q·Kᵀ per head (K read transposed from the QKV projection's buffer), the 1/sqrt(d) scale, the
    softmax and P·V per head, whose rows go straight into the output projection's input (the
    heads' permute and reshape are views): no copy of any activation."""
    model = encoder_layer()
    x = torch.randn(1, 19, 32)
    compiled = baco.compile_model(model, x, calibrate=2)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds == ["reshape", "linear", "matmul", "mul_scalar", "softmax", "matmul", "reshape", "linear",
                     "reshape", "add", "layernorm", "linear", "lut", "linear", "add", "layernorm"], kinds
    scores, context = (op for op in compiled.graph.ops if op.kind == "matmul")
    assert scores.q["a_view"] == ((1, 4, 19, 8), (32, 8, 96, 1), 0)          # Q: rows of the projection
    assert scores.q["b_view"] == ((1, 4, 8, 19), (32, 8, 1, 96), 32)         # Kᵀ: column-major
    assert context.q["out_order"] == (2, 0, 1, 3)                            # stored (S, B, H, d)
    assert sum(len(s.launches) for s in compiled.lowered.steps if s.op.kind == "matmul") == 8    # per head
    assert_bit_exact(compiled, seeded_inputs((1, 19, 32)))
    err = quantization_error(model, compiled, seeded_inputs((1, 19, 32), 2, seed=3))
    assert err["cosine"] > 0.99, err


@pytest.mark.slow
def test_encoder_layer_one_elf_on_the_iss(tmp_path):
    """The encoder layer linked into one self-checking ELF (GEMMs reading heads in place, the
    CPU operators between them) and run on the ISS: bit-exact."""
    from baco.codegen.program import run_program
    model = encoder_layer()
    x = torch.randn(1, 19, 32)
    compiled = baco.compile_model(model, x, calibrate=2)
    run = run_program(compiled.build_elf(tmp_path / "encoder.elf", x))
    assert run.passed, run.console[-2000:]


def test_transformers_bert_layer_from_a_config():
    """transformers' BertModel built from a BertConfig (no weights downloaded; transformers imports
    torchvision, entered without its C++ ops): its encoder is captured as it is - separate Q, K, V
    projections, each head read in place, GELU as a table - and bit-exact."""
    from baco.model.zoo import transformers_bert_encoder
    model = transformers_bert_encoder(1, hidden_size=48, num_attention_heads=3, intermediate_size=80)
    x = torch.randn(1, 13, 48)
    compiled = baco.compile_model(model, x, calibrate=2)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds == ["linear", "linear", "linear", "matmul", "mul_scalar", "softmax", "matmul", "reshape", "linear",
                     "add", "layernorm", "linear", "lut", "linear", "add", "layernorm"], kinds
    assert_bit_exact(compiled, seeded_inputs((1, 13, 48)))


def small_bert(layers=2):
    from baco.model.zoo import transformers_bert_model
    return transformers_bert_model(layers, vocab_size=100, hidden_size=32, num_attention_heads=4, intermediate_size=48,
                                   max_position_embeddings=64)


def test_transformers_bert_model_whole_from_token_ids():
    """transformers' whole BertModel from token ids: the word embedding a CPU gather by the int64
    ids (an int8 table), the position and token-type embeddings (indices from buffers) folded into
    constants added on Gemmini, the all-true attention mask folded away; bit-exact, close to float."""
    model = small_bert()
    ids = torch.randint(0, 100, (1, 19), generator=torch.Generator().manual_seed(0))
    compiled = baco.compile_model(model, ids, calibrate=2)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds[:6] == ["embedding", "constant", "add", "constant", "add", "layernorm"], kinds
    assert kinds.count("matmul") == 4 and kinds.count("softmax") == 2, kinds
    assert compiled.input_tensor.bound == 100
    others = [torch.randint(0, 100, (1, 19), generator=torch.Generator().manual_seed(s)) for s in (1, 2)]
    assert_bit_exact(compiled, [ids, *others, np.array([[0] * 10 + [99] * 9])])
    err = quantization_error(model, compiled, others)
    assert err["cosine"] > 0.99, err
    with pytest.raises(ValueError, match=r"x: token ids must be in \[0, 100\)"):
        compiled(torch.full((1, 19), 100))
    with pytest.raises(TypeError, match="x must be integer token ids"):
        compiled(torch.randn(1, 19))


@pytest.mark.slow
def test_transformers_bert_model_one_elf_on_the_iss(tmp_path):
    """The whole BertModel (token ids in, the embedding tables read-only data) as one ELF on the ISS."""
    from baco.codegen.program import run_program
    model = small_bert(1)
    ids = torch.randint(0, 100, (1, 19), generator=torch.Generator().manual_seed(3))
    compiled = baco.compile_model(model, ids, calibrate=2)
    run = run_program(compiled.build_elf(tmp_path / "bert.elf", ids))
    assert run.passed, run.console[-2000:]


def test_transformers_bert_model_what_stops_it():
    """An attention mask given as a second input, or the pooler's second output, are clear errors."""
    model = small_bert(1)
    ids = torch.randint(0, 100, (1, 19))

    class WithMask(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, ids, mask):
            return self.bert(input_ids=ids, attention_mask=mask).last_hidden_state

    with pytest.raises(TypeError, match="compile_model takes models of one input, not 2"):
        baco.compile_model(WithMask(), (ids, torch.ones(1, 19, dtype=torch.long)))


def test_timm_vision_transformer():
    """timm's ViT (two blocks, 32x32 images in 8x8 patches): the patch conv's NHWC output viewed as
    tokens, the class token and position embedding as int8 constants (concatenated, added on
    Gemmini), heads unbound from the QKV projection in place, the class token's row selected."""
    from baco.model.zoo import timm_model
    model = timm_model("vit_tiny_patch16_224", img_size=32, patch_size=8, depth=2)
    x = torch.randn(1, 3, 32, 32)
    compiled = baco.compile_model(model, x, calibrate=2)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds[:6] == ["conv", "constant", "reshape", "cat", "constant", "add"], kinds
    assert kinds.count("matmul") == 4 and "permute" not in kinds, kinds
    assert_bit_exact(compiled, seeded_inputs((1, 3, 32, 32)))


def test_encoder_layer_batch_of_two_copies_the_heads():
    """Batch 2: the heads of Q, K and V are not matrices of the projection's buffer (its rows are
    (token, batch)), so each is copied out (strided copies on the CPU); bit-exact all the same."""
    model = encoder_layer(d=24, heads=3, ff=40)
    x = torch.randn(2, 9, 24)
    compiled = baco.compile_model(model, x, calibrate=2)
    kinds = [op.kind for op in compiled.graph.ops]
    assert kinds.count("strided_copy") == 3 and kinds.count("matmul") == 2, kinds
    assert_bit_exact(compiled, seeded_inputs((2, 9, 24)))


class Attention(nn.Module):
    """One attention head with layernorm, softmax and a GELU feed-forward."""

    def __init__(self, d=24):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.q, self.k, self.v, self.ff = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        h = self.norm(x)
        scores = torch.softmax(torch.bmm(self.q(h), self.k(h).permute(0, 2, 1)) * 0.2, dim=-1)
        return x + nn.functional.gelu(self.ff(torch.bmm(scores, self.v(h))))


def test_attention_layernorm_softmax_gelu():
    torch.manual_seed(0)
    model = Attention().eval()
    model.norm.weight.data.uniform_(0.5, 1.5)
    model.norm.bias.data.uniform_(-0.2, 0.2)
    x = torch.randn(2, 17, 24)
    compiled = baco.compile_model(model, x, calibrate=3)
    kinds = [op.kind for op in compiled.graph.ops]
    assert {"layernorm", "softmax", "lut", "matmul", "add"} <= set(kinds), kinds
    assert_bit_exact(compiled, seeded_inputs((2, 17, 24)))


def test_unsupported_op_names_the_op_and_the_line():
    class Elu(nn.Module):
        def forward(self, x):
            return nn.functional.elu(x)     # the line the error names
    with pytest.raises(CompilationError) as err:
        baco.compile_model(Elu(), torch.randn(2, 8))
    line = Elu.forward.__code__.co_firstlineno + 1
    assert "aten.elu" in str(err.value) and err.value.filename == __file__ and err.value.line == line
    assert "return nn.functional.elu(x)" in str(err.value)
    text = linecache.getline(__file__, line)
    assert err.value.col == text.index("nn.functional.elu") + 1      # the caret under the call


@pytest.mark.parametrize("module,shape,match", [
    (nn.Sequential(nn.BatchNorm2d(3)), (1, 3, 4, 4), "batch_norm"),
    (nn.Sequential(nn.Linear(4, 4), nn.Softplus()), (2, 4), "softplus"),
])
def test_unsupported_forms_are_located_errors(module, shape, match):
    with pytest.raises(CompilationError, match=match):
        baco.compile_model(module.eval(), torch.randn(shape))


class MaskedAttention(nn.Module):
    """Self-attention of 2 heads with a constant mask: causal, or an additive 0 / -inf float mask."""

    def __init__(self, causal=True, seq=9):
        super().__init__()
        self.qkv, self.causal, self.seq = nn.Linear(16, 48), causal, seq
        additive = torch.zeros(seq, seq)
        additive[:, seq - 3:] = float("-inf")          # the last 3 keys are padding
        self.register_buffer("additive", additive)

    def forward(self, x):
        q, k, v = self.qkv(x).view(1, self.seq, 3, 2, 8).permute(2, 0, 3, 1, 4)
        if self.causal:
            return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=self.additive)


@pytest.mark.parametrize("causal,period", [(True, (9, 9)), (False, (1, 9))])
def test_constant_attention_masks_run_a_masked_softmax(causal, period):
    """A causal mask (masked_fill of -inf) or an additive 0 / -inf mask broadcast over the scores:
    the softmax runs masked (one period of the mask's rows stored), bit-exact, close to float."""
    torch.manual_seed(0)
    model = MaskedAttention(causal).eval()
    x = torch.randn(1, 9, 16)
    compiled = baco.compile_model(model, x, calibrate=2)
    assert [op.kind for op in compiled.graph.ops] == ["linear", "matmul", "mul_scalar", "softmax", "matmul"]
    keep = next(op.q["keep"] for op in compiled.graph.ops if op.kind == "softmax")
    assert keep.shape == period and keep.dtype == bool
    assert_bit_exact(compiled, seeded_inputs((1, 9, 16), 2, seed=4))
    assert quantization_error(model, compiled, seeded_inputs((1, 9, 16), 2, seed=5))["cosine"] > 0.99


def test_attention_mask_errors_are_located():
    """masked_fill with a value other than -inf has no operator: located at the model's line."""
    class Fill(nn.Module):
        def forward(self, x):
            return torch.softmax(x.masked_fill(torch.eye(9, dtype=torch.bool), 0.5), -1)     # the line
    with pytest.raises(CompilationError, match="only -inf") as err:
        baco.compile_model(Fill(), torch.randn(1, 9, 9))
    assert err.value.filename == __file__ and err.value.line == Fill.forward.__code__.co_firstlineno + 1


def test_grouped_query_attention_is_a_located_error():
    """enable_gqa repeats each K/V head over its group of Q heads (as torch does); the repeat has
    no operator yet: a located error naming it, not an exception from the decomposition."""
    class Grouped(nn.Module):
        def forward(self, q, kv):
            return nn.functional.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)     # the line

    class Call(nn.Module):
        def forward(self, x):
            return Grouped()(x, x[:, :2])
    with pytest.raises(CompilationError, match="repeat_interleave") as err:
        baco.compile_model(Call(), torch.randn(1, 4, 9, 8))
    assert err.value.filename == __file__ and err.value.line == Grouped.forward.__code__.co_firstlineno + 1


def test_constants_fold_and_broadcast_adds():
    """Values computed from parameters alone (an unbind of a parameter, positions from arange) are
    folded by torch at capture; a constant broadcast over an activation is stored broadcast and
    added on Gemmini. A broadcast add of two activations stays a located error."""
    class Biased(nn.Module):
        def __init__(self):
            super().__init__()
            self.table, self.lin = nn.Parameter(torch.randn(2, 8, 8)), nn.Linear(8, 8)

        def forward(self, x):
            per_position, _ = self.table.unbind(0)
            return self.lin(x) + per_position + torch.arange(x.shape[1]).float()[:, None] * 0.1

    torch.manual_seed(0)
    compiled = baco.compile_model(Biased().eval(), torch.randn(1, 8, 8), calibrate=2)
    assert [op.kind for op in compiled.graph.ops] == ["linear", "constant", "add", "constant", "add"]
    assert [compiled.graph.tensors[op.output].shape for op in compiled.graph.ops if op.kind == "constant"] == \
        [(1, 8, 8)] * 2
    assert_bit_exact(compiled, seeded_inputs((1, 8, 8)))

    class Broadcast(nn.Module):
        def forward(self, x):
            return x + x[:, :1]     # the line
    with pytest.raises(CompilationError, match="broadcasting") as err:
        baco.compile_model(Broadcast(), torch.randn(1, 8, 8))
    line = Broadcast.forward.__code__.co_firstlineno + 1
    assert err.value.line == line and err.value.col == linecache.getline(__file__, line).index("+ x[") + 1

    class Noisy(nn.Module):
        def forward(self, x):
            return x + torch.rand(x.shape[-1])     # the line: a random value is never folded
    with pytest.raises(CompilationError, match="random value") as err:
        baco.compile_model(Noisy(), torch.randn(1, 8, 8))
    assert err.value.line == Noisy.forward.__code__.co_firstlineno + 1


def test_broadcast_mul_is_a_located_error():
    """The caret is under the operator the model wrote (`*`, aten.mul), not at the statement's start."""
    class Scale(nn.Module):
        def forward(self, x):
            return x * x[:, :1]

    class ScaleLater(nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            y *= 2
            return torch.relu(y) + 1 * (y * x[:, :1])
    for module, what in ((Scale, "* x["), (ScaleLater, "* x[")):
        with pytest.raises(CompilationError, match="mul of shapes") as err:
            baco.compile_model(module(), torch.randn(2, 4, 3, 3))
        line = module.forward.__code__.co_firstlineno + (1 if module is Scale else 3)
        assert (err.value.filename, err.value.line) == (__file__, line)
        assert err.value.col == linecache.getline(__file__, line).index(what) + 1


@pytest.mark.slow
def test_mlp1_full_size(tmp_path):
    """gemmini-rocc-tests' mlp1: 784-2500-2000-1500-1000-500-10 at batch 64, on sim and as one ELF on
    the ISS."""
    from baco.codegen.program import run_program
    model = mlp(MLP1)
    x = torch.randn(64, 784)
    compiled = baco.compile_model(model, x, calibrate=2)
    assert_bit_exact(compiled, [x])
    run = run_program(compiled.build_elf(tmp_path / "mlp1.elf", x))
    assert run.passed and len(run.step_cycles) == 6


SPIKE_EXTLIB = os.environ.get("BACO_SPIKE_EXTLIB", "")
# Gemmini's mlp1 shape at batch 64, and two CNNs at 1x3x32x32 (as on the ISS above)
SPIKE_MODELS = {"mlp1": (lambda: mlp(MLP1), (64, 784)),
                "resnet18": (lambda: torchvision_model("resnet18", (2, 3, 32, 32)), (1, 3, 32, 32)),
                "mobilenet_v2": (lambda: torchvision_model("mobilenet_v2", (2, 3, 32, 32)), (1, 3, 32, 32))}


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(SPIKE_EXTLIB), reason="Spike's Gemmini library is not installed "
                    "(set BACO_SPIKE_EXTLIB)")
@pytest.mark.parametrize("name", SPIKE_MODELS)
def test_whole_model_elf_on_spike(name, tmp_path):
    """The model as one self-checking ELF exits 0 (bit-exact against the reference) on Spike with
    libgemmini (built for the default DIM 16 Gemmini)."""
    from baco.sim.external import run_spike
    factory, shape = SPIKE_MODELS[name]
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    build = baco.compile_model(factory(), x, calibrate=2).build_elf(tmp_path / f"{name}.elf", x)
    assert run_spike(build.elf, timeout_s=1200, stdout=None) == 0
