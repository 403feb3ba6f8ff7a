"""torch.nn model factories for `baco tune --torch MODULE:CALLABLE` beside torchvision's,
built only from torch.nn (shapes matter, weights are random)."""
import torch


def bert_base_encoder(layers: int = 12) -> torch.nn.Module:
    """BERT-base's encoder stack: 12 layers, hidden 768, 12 heads, feed-forward 3072 with GELU
    (post-norm, as BERT); input (batch, sequence, 768), e.g. --input-shape 1,128,768."""
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, activation="gelu",
                                             batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
