# ruff: noqa
# A generator driven by send(), and yield from.
import torch
def running_mean():
    total = torch.zeros(2)
    count = 0
    while True:
        value = yield total / max(count, 1)
        total = total + value
        count += 1
def chain(*gens):
    for g in gens:
        yield from g
x = torch.tensor([2., 4.], requires_grad=True)
gen = running_mean()
next(gen)
m1 = gen.send(x)
m2 = gen.send(x * 3)
gen.close()
parts = list(chain(iter([x * 1]), iter([x * 2])))
(m2.sum() + parts[1].sum()).backward()
