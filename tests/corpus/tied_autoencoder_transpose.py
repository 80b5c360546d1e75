# ruff: noqa
# A tied-weight autoencoder: the decoder uses the encoder's weight transposed, so one Parameter gets both gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(9)

class TiedAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 2)
        self.dec_bias = nn.Parameter(torch.zeros(6))

    def forward(self, x):
        z = torch.relu(self.enc(x))
        return F.linear(z, self.enc.weight.t(), self.dec_bias)

model = TiedAE()
print([n for n, _ in model.named_parameters()])
x = torch.randn(5, 6)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for i in range(3):
    opt.zero_grad()
    recon = model(x)
    loss = F.mse_loss(recon, x)
    loss.backward()
    opt.step()
    print(i, round(loss.item(), 5))
print(model.enc.weight.grad.shape, model.dec_bias.grad)
