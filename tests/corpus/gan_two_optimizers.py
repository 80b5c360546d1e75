# ruff: noqa
# One GAN training step: D on real and fake.detach(), then G through D, two optimizers, BCE with logits.
import torch
from torch import nn
torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
D = nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-2, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-2, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()
real = torch.randn(4, 2) + 3
for step in range(1):
    z = torch.randn(4, 2)
    fake = G(z)
    opt_d.zero_grad()
    loss_real = criterion(D(real), torch.ones(4, 1))
    loss_fake = criterion(D(fake.detach()), torch.zeros(4, 1))
    loss_d = (loss_real + loss_fake) / 2
    loss_d.backward()
    opt_d.step()
    print("G grads after D step:", [p.grad for p in G.parameters()])
    opt_g.zero_grad()
    loss_g = criterion(D(fake), torch.ones(4, 1))
    loss_g.backward()
    opt_g.step()
    print(step, f"D {loss_d.item():.4f}  G {loss_g.item():.4f}")
    print("D got grads from the G step too:", D[0].weight.grad.abs().sum().item() > 0)
