"""torch.nn model factories for `baco tune --torch MODULE:CALLABLE` beside torchvision's,
built only from torch.nn (shapes matter, weights are random)."""
import torch


def bert_base_encoder(layers: int = 12) -> torch.nn.Module:
    """BERT-base's encoder stack: 12 layers, hidden 768, 12 heads, feed-forward 3072 with GELU
    (post-norm, as BERT); input (batch, sequence, 768), e.g. --input-shape 1,128,768."""
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, activation="gelu",
                                             batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)


def bert_base_layer() -> torch.nn.Module:
    """One BERT-base encoder layer (bert_base_encoder's), issue H's BERT model; input (batch,
    sequence, 768)."""
    return bert_base_encoder(1)


class DecoderBlock(torch.nn.Module):
    """A GPT decoder block written with Linear and matmul, so that torch.fx sees every GEMM and
    what lies between them (pre-norm, causal softmax attention, GELU feed-forward, residuals)."""

    def __init__(self, d_model: int, heads: int, ffn: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (torch.nn.Linear(d_model, d_model) for _ in range(4))
        self.fc1, self.fc2 = torch.nn.Linear(d_model, ffn), torch.nn.Linear(ffn, d_model)
        self.act = torch.nn.GELU()

    def forward(self, x):
        batch, tokens, d_model = x.shape
        head_dim = d_model // self.heads
        h = self.ln1(x)
        q, k, v = (proj(h).view(batch, tokens, self.heads, head_dim).transpose(1, 2)
                   for proj in (self.q_proj, self.k_proj, self.v_proj))
        scores = torch.matmul(q, k.transpose(2, 3)) / head_dim ** 0.5
        causal = torch.ones_like(scores, dtype=torch.bool).triu(1)
        attn = torch.matmul(scores.masked_fill(causal, float("-inf")).softmax(-1), v)
        x = self.out_proj(attn.transpose(1, 2).reshape(batch, tokens, d_model)) + x
        return self.fc2(self.act(self.fc1(self.ln2(x)))) + x


def gpt3_6p7b_block() -> torch.nn.Module:
    """One decoder block of GPT-3 6.7B (d_model 4096, 32 heads, feed-forward 16384); input
    (batch, sequence, 4096), e.g. --input-shape 1,2048,4096."""
    return DecoderBlock(4096, 32, 16384)


def mobilenet_v1(width: float = 1.0, classes: int = 1000) -> torch.nn.Module:
    """MobileNetV1 (Howard et al. 2017, Table 1): a 3x3 stride-2 stem and 13 depthwise-separable
    blocks (3x3 depthwise + BN + ReLU, 1x1 pointwise + BN + ReLU), global average pool, a
    classifier; input e.g. 1,3,224,224."""
    nn = torch.nn

    def conv_bn(cin, cout, kernel, stride, groups=1):
        return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
    c = lambda n: int(n * width)  # noqa: E731
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    layers, cin = conv_bn(3, c(32), 3, 2), c(32)
    for cout, stride in plan:
        layers += conv_bn(cin, cin, 3, stride, groups=cin) + conv_bn(cin, c(cout), 1, 1)
        cin = c(cout)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes))
