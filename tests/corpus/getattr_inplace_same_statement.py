# ruff: noqa
# A saved value changed in its own statement through getattr: exp saved its result, add_ changed it,
# backward fails. Through a bound method kept in a name, a sigmoid's saved result changed; and a
# product whose inputs are left alone runs fine.
import torch
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
y = getattr(x.exp(), "add_")(1)
try:
    y.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
s = x.sigmoid()
bump = s.mul_
bump(2)
try:
    s.sum().backward()
except RuntimeError as e:
    print("inplace" in str(e))
m = x * 2
grow = m.add_
grow(3)
m.sum().backward()
print(x.grad)
