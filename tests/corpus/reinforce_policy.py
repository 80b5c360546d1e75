# ruff: noqa
# REINFORCE: sample actions from Categorical(logits=...), log_prob times normalised returns, one Adam step.
import torch
from torch.distributions import Categorical
torch.manual_seed(0)
policy = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.Adam(policy.parameters(), lr=0.01)
states = torch.randn(3, 2)
log_probs = []
rewards = []
for s in states:
    dist = Categorical(logits=policy(s))
    action = dist.sample()
    log_probs.append(dist.log_prob(action))
    rewards.append(1.0 if action.item() == 0 else -0.5)
returns = []
G = 0.0
for r in reversed(rewards):
    G = r + 0.9 * G
    returns.insert(0, G)
returns = torch.tensor(returns)
returns = (returns - returns.mean()) / (returns.std() + 1e-8)
loss = -(torch.stack(log_probs) * returns).sum()
opt.zero_grad()
loss.backward()
opt.step()
print(rewards, returns, loss.item())
print(policy[2].bias.grad)
