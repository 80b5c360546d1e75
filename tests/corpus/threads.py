# Work done in a thread.
import threading
import torch
x = torch.tensor([1., 2.], requires_grad=True)
results = []
def work():
    results.append((x * 2).sum())
t = threading.Thread(target=work)
t.start()
t.join()
r = results[0]
r.backward()
