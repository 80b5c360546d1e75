# ruff: noqa
# A generator changes a tensor in place between yields; the consumer changes it too.
import torch
def counter(t):
    for _ in range(3):
        t.add_(1)
        yield t.clone()
        t.mul_(2)
acc = torch.zeros(2)
snaps = []
for s in counter(acc):
    snaps.append(s)
    acc[0] += 10
print(acc, snaps)
