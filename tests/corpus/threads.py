# ruff: noqa
# Work done in a thread (started and joined within one statement, so each step is determinate).
import threading
import torch
x = torch.tensor([1., 2.], requires_grad=True)
results = []
go = threading.Event()
def work():
    go.wait()
    results.append((x * 2).sum())
t = threading.Thread(target=work)
t.start()
go.set() or t.join()
r = results[0]
r.backward()
