# ruff: noqa
# A trainer object holding a model, an optimizer and its last loss; the model lives only inside the trainer.
import torch
import torch.nn as nn

torch.manual_seed(1)


class Trainer:
    def __init__(self):
        self.model = nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.last = None

    def step(self, x, y):
        self.opt.zero_grad()
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()
        self.opt.step()
        self.last = loss.detach()
        return loss


trainer = Trainer()
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = torch.tensor([[1.0], [2.0]])
for _ in range(2):
    loss = trainer.step(x, y)
print(trainer.model.weight, trainer.last)
del trainer
print(loss)
