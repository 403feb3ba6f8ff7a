"""Models with seeded random weights (nothing is downloaded) for tests, benchmarks and `baco tune
--torch baco.model.zoo:NAME`: an MLP shaped like gemmini-rocc-tests' mlp1, a small CNN with
every Gemmini operator, torchvision models, and transformers / timm models built from a config. A random-weight network with BatchNorm's unit
statistics lets its activations vanish (or explode) layer after layer, so `with_bn_statistics`
measures them on seeded random inputs, as training would have set them."""
from __future__ import annotations

import torch
from torch import nn

MLP1 = (784, 2500, 2000, 1500, 1000, 500, 10)     # gemmini-rocc-tests mlps/mlp1.c


def seeded_inputs(shape, n: int = 2, seed: int = 1) -> list:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) for _ in range(n)]


def with_bn_statistics(model: nn.Module, input_shape=None, seed: int = 0, batches: int = 4) -> nn.Module:
    """model in eval mode with random BatchNorm affine parameters and running statistics (so
    folding is exercised); given an input shape, the running statistics are then measured over
    `batches` seeded random inputs (a cumulative average)."""
    torch.manual_seed(seed)
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.weight.data.uniform_(0.5, 1.5)
        m.bias.data.uniform_(-0.3, 0.3)
        m.running_mean.uniform_(-0.5, 0.5)
        m.running_var.uniform_(0.5, 2.0)
    if input_shape is not None and bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None
        model.train()
        with torch.no_grad():
            for x in seeded_inputs(input_shape, batches, seed=seed + 100):
                model(x)
    return model.eval()


def mlp(sizes=MLP1, seed: int = 0) -> nn.Sequential:
    """Linear layers of `sizes` with ReLU between them (none after the last)."""
    torch.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers += [nn.Linear(a, b)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    return nn.Sequential(*layers).eval()


class SmallCNN(nn.Module):
    """conv/bn/relu/maxpool, a residual add, a strided conv, adaptive average pooling, linear."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.conv2, self.bn2 = nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.conv3 = nn.Conv2d(16, 33, 3, stride=2, padding=1)
        self.avg = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(33, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        y = torch.relu(self.bn2(self.conv2(x)))
        x = torch.relu(x + y)
        x = torch.relu(self.conv3(x))
        return self.fc(torch.flatten(self.avg(x), 1))


def small_cnn(seed: int = 0) -> SmallCNN:
    torch.manual_seed(seed)
    return with_bn_statistics(SmallCNN(), seed=seed)


def torchvision_model(name: str, input_shape=(2, 3, 32, 32), seed: int = 0) -> nn.Module:
    """torchvision.models.<name>(weights=None), seeded, BatchNorm statistics measured on inputs of
    `input_shape`."""
    from baco.tuner.workloads import import_model_module
    torch.manual_seed(seed)
    model = getattr(import_model_module("torchvision.models"), name)(weights=None)
    return with_bn_statistics(model, input_shape, seed)


def transformers_bert_encoder(layers: int = 1, **config) -> nn.Module:
    """transformers' BertModel encoder (input: the embeddings, (batch, sequence, hidden)) built from
    a BertConfig(num_hidden_layers=layers, **config), BERT-base's sizes by default; seeded random
    weights, nothing downloaded."""
    from baco.tuner.workloads import import_model_module
    transformers = import_model_module("transformers")
    torch.manual_seed(0)
    return transformers.BertModel(transformers.BertConfig(num_hidden_layers=layers, **config)).encoder.eval()


def transformers_bert_model(layers: int = 1, **config) -> nn.Module:
    """transformers' whole BertModel from token ids (embeddings, encoder; no pooler: the model returns
    one tensor, the last hidden state) built from a BertConfig(num_hidden_layers=layers, **config);
    seeded random weights, nothing downloaded."""
    from baco.tuner.workloads import import_model_module
    transformers = import_model_module("transformers")
    torch.manual_seed(0)
    return transformers.BertModel(transformers.BertConfig(num_hidden_layers=layers, **config),
                                  add_pooling_layer=False).eval()


def timm_model(name: str = "vit_tiny_patch16_224", **kwargs) -> nn.Module:
    """timm.create_model(name, pretrained=False, **kwargs), seeded (nothing downloaded)."""
    from baco.tuner.workloads import import_model_module
    timm = import_model_module("timm")
    torch.manual_seed(0)
    return timm.create_model(name, pretrained=False, **kwargs).eval()


__all__ = ["transformers_bert_encoder", "transformers_bert_model", "timm_model", "mlp", "MLP1", "SmallCNN", "small_cnn", "torchvision_model", "with_bn_statistics", "seeded_inputs"]
