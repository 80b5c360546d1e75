# ruff: noqa
# nn.RNN against the same recurrence written with its own weights, step by step; outputs and a weight's gradient agree.
import torch
torch.manual_seed(30)
rnn = torch.nn.RNN(input_size=2, hidden_size=3, batch_first=True)
x = torch.randn(1, 4, 2)
out, h_n = rnn(x)
h = torch.zeros(3)
manual = []
for t in range(4):
    h = torch.tanh(rnn.weight_ih_l0 @ x[0, t] + rnn.bias_ih_l0 + rnn.weight_hh_l0 @ h + rnn.bias_hh_l0)
    manual.append(h)
manual = torch.stack(manual)
print(torch.allclose(manual, out[0], atol=1e-6), out.shape, h_n.shape)
out.sum().backward(retain_graph=True)
g_module = rnn.weight_hh_l0.grad.clone()
rnn.zero_grad()
manual.sum().backward()
print(torch.allclose(g_module, rnn.weight_hh_l0.grad, atol=1e-6))
print(h_n.grad_fn is not None, out[0, -1], h_n[0, 0])
