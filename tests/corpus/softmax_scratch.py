# ruff: noqa
# Softmax regression from scratch: softmax by exp/sum, cross-entropy by fancy indexing, an accuracy count.
import torch
torch.manual_seed(1)
num_inputs, num_outputs = 6, 3
W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
b = torch.zeros(num_outputs, requires_grad=True)

def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdim=True)
    return X_exp / partition

def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)

def cross_entropy(y_hat, y):
    return -torch.log(y_hat[range(len(y_hat)), y])

def accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())

X = torch.randn(8, num_inputs)
y = torch.tensor([0, 2, 1, 1, 0, 2, 2, 0])
X_prob = softmax(torch.normal(0, 1, (2, 5)))
print(X_prob, X_prob.sum(1))
for epoch in range(3):
    y_hat = net(X)
    l = cross_entropy(y_hat, y)
    l.mean().backward()
    with torch.no_grad():
        W -= 0.5 * W.grad
        b -= 0.5 * b.grad
        W.grad.zero_()
        b.grad.zero_()
    print(epoch, float(l.mean()), accuracy(y_hat, y) / len(y))
