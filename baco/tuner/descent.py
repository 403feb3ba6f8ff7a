"""What every gradient descent of the search shares (explore.gradient_descent, importance.run_slice,
the baselines): the optimiser and the loss's weight on penalties."""
from __future__ import annotations

import torch
from torch.optim.adam import adam

PENALTY_WEIGHT = 10.0


class Adam:
    """Adam on a list of tensors: torch.optim's functional `adam` (the torch.optim.Adam class's first
    construction imports the compiler stack, 1.6 s here; the function costs a few milliseconds). The
    bias correction counts the optimiser's steps, as the class does for a parameter with a gradient
    at every step."""

    def __init__(self, params: list[torch.Tensor], lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.params, self.lr, self.betas, self.eps, self.t = params, lr, betas, eps, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.steps = [torch.zeros((), dtype=torch.float64) for _ in params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        for i in live:
            self.steps[i].fill_(self.t - 1)       # the function counts it up to this step
        adam([self.params[i] for i in live], [self.params[i].grad for i in live], [self.m[i] for i in live],
             [self.v[i] for i in live], [], [self.steps[i] for i in live], foreach=False, amsgrad=False,
             beta1=self.betas[0], beta2=self.betas[1], lr=self.lr, weight_decay=0.0, eps=self.eps, maximize=False)
