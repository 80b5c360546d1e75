# ruff: noqa
# Coroutines computing tensors under asyncio.run.
import asyncio
import torch
async def scale(t, k):
    await asyncio.sleep(0)
    r = t * k
    return r
async def main(x):
    a, b = await asyncio.gather(scale(x, 2), scale(x, 3))
    return a + b
x = torch.tensor([1., 2.], requires_grad=True)
y = asyncio.run(main(x))
y.sum().backward()
