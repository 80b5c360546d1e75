# ruff: noqa
# A worker thread changes a tensor in place while the main thread waits for it.
import torch
from concurrent.futures import ThreadPoolExecutor
t = torch.zeros(3)
w = torch.tensor([1., 2., 3.], requires_grad=True)
def work():
    for i in range(3):
        t[i] = i * 2.
    return t.sum()
with ThreadPoolExecutor(1) as ex:
    total = ex.submit(work).result()
y = (w * t).sum()
y.backward()
print(t, total, w.grad)
