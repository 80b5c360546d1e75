# ruff: noqa
# A hand-written optimizer subclassing torch.optim.Optimizer: @torch.no_grad() step with per-parameter state, the old p.data.add_ style and the new one.
import torch

class MomentumSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "buf" not in state:
                    state["buf"] = p.grad.clone()
                else:
                    state["buf"].mul_(group["momentum"]).add_(p.grad)
                p.add_(state["buf"], alpha=-group["lr"])

torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(3))
b = torch.nn.Parameter(torch.zeros(1))
opt = MomentumSGD([w, b], lr=0.05)
for i in range(2):
    opt.zero_grad()
    loss = (w.sum() + b - 1.0).pow(2).sum()
    loss.backward()
    opt.step()
print(w, b, opt.state[w]["buf"])
w.data.add_(w.grad.data, alpha=-0.01)
print(w)
