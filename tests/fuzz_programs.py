"""Hypothesis strategies that write small PyTorch programs, and the fuzzing settings, shared by the fuzz tests.

``programs`` draws straight-line code, small loops, ``no_grad`` blocks, in-place changes, views,
rebinding, ``del``, ``detach``, ``retain_grad`` and ``backward`` over 40-odd tensor operations,
including programs that fail; ``wide_programs`` adds hooks, views of views, double backward and
other dtypes; ``module_programs`` trains small ``nn.Module``s. ``FUZZ`` keeps every run derandomized.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Shape = tuple[int, ...]
NAMES = ("a", "b", "c", "d", "e", "f")
SHAPES: tuple[Shape, ...] = ((2, 3), (3,), (), (3, 2), (2, 3), (4,))
FUZZ = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Var:
    """What the generator believes a name holds (a guide only: torch decides)."""

    shape: Shape
    rg: bool = False  # requires grad
    leaf: bool = True
    view_of_leaf: bool = False  # a view of a leaf that requires grad
    has_grad: bool = False


def broadcast(a: Shape, b: Shape) -> Shape | None:
    out = []
    pa, pb = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    for x, y in zip(reversed(pa), reversed(pb), strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def shape_text(shape: Shape) -> str:
    return ", ".join(str(s) for s in shape)


UNARY = (
    "torch.exp({a})", "{a}.exp()", "torch.log({a})", "torch.log({a}.abs() + 1)", "{a}.sin()", "torch.cos({a})",
    "torch.tanh({a})", "{a}.sigmoid()", "torch.relu({a})", "torch.nn.functional.relu({a})", "{a}.abs()",
    "-{a}", "{a} ** 2", "{a} ** 3", "torch.pow({a}, 0.5)", "{a}.sqrt()", "{a}.clamp(-0.5, 0.5)",
    "torch.clamp({a}, min=0.0)", "{a} * 2.5", "{a} + 1", "1 / ({a} * {a} + 1)", "{a}.square()",
    "torch.nn.functional.softplus({a})", "{a}.clone()", "{a}.neg()", "torch.atan({a})", "2 ** {a}",
)
BINARY = (
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "torch.maximum({a}, {b})", "torch.minimum({a}, {b})",
    "torch.where({a} > 0, {a}, {b})", "torch.add({a}, {b}, alpha=2)", "{a} * {b} + {a}", "torch.mul({a}, {b})",
)
REDUCE = ("{a}.sum()", "{a}.mean()", "torch.sum({a})", "{a}.prod()", "{a}.amax()", "{a}.norm()")
INPLACE_SCALAR = (
    "{a}.add_(1)", "{a}.mul_(0.5)", "{a} += 2", "{a} *= -1.5", "{a}.clamp_(min=-1.0)", "{a}.sin_()",
    "{a}.exp_()", "{a}.sigmoid_()", "{a}.zero_()", "{a}.sub_(0.25)", "{a}.div_(2)", "{a}.pow_(2)",
    "{a}.tanh_()", "{a}.relu_()", "{a}.neg_()", "{a}.abs_()",
    "{a}.data.mul_(2)", "{a}.data.add_(1)", "{a}.detach().add_(1)", "{a}.detach().zero_()",
)
INPLACE_TENSOR = ("{a}.add_({b})", "{a}.mul_({b})", "{a} += {b}", "{a} -= {b}", "{a}.copy_({b})", "{a}.div_({b})")


#: dtypes of the widened generator; complex programs draw from the ops complex numbers support
DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64")
COMPLEX_UNARY = (
    "torch.exp({a})", "{a}.sin()", "torch.tanh({a})", "-{a}", "{a} ** 2", "{a} * 2.5", "{a} + 1", "{a}.conj() * {a}",
    "{a}.clone()", "{a}.neg()", "{a}.sqrt()", "{a} * (1 - 2j)",
)
COMPLEX_BINARY = ("{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / ({b} + 3)", "torch.mul({a}, {b})")
COMPLEX_REDUCE = ("{a}.abs().sum()", "({a} * {a}.conj()).real.sum()", "{a}.real.mean()", "{a}.imag.sum()")
COMPLEX_INPLACE = ("{a}.add_(1)", "{a}.mul_(0.5)", "{a} += 2j", "{a} *= -1.5", "{a}.zero_()", "{a}.neg_()")


class Gen:
    """Draws statements and keeps the guide state up to date."""

    def __init__(self, draw: st.DrawFn, dtype: str = "") -> None:
        self.draw = draw
        self.vars: dict[str, Var] = {}
        self.grad_on = True
        self.dtype = dtype  # "" keeps torch's default (float32) and the plain text of the first half
        self.complex = dtype.startswith("complex")

    # -- helpers ----------------------------------------------------------
    def pick(self, pred=lambda _v: True) -> str | None:
        names = sorted(n for n, v in self.vars.items() if pred(v))
        if not names:
            return None
        return self.draw(st.sampled_from(names))

    def target(self) -> str:
        return self.draw(st.sampled_from(NAMES))

    def result(self, *inputs: str, shape: Shape) -> Var:
        rg = self.grad_on and any(self.vars[i].rg for i in inputs)
        return Var(shape, rg=rg, leaf=not rg)

    def assign(self, name: str, var: Var, expr: str) -> str:
        self.vars[name] = var
        return f"{name} = {expr}"

    # -- statement kinds --------------------------------------------------
    def new_tensor(self) -> str:
        shape = self.draw(st.sampled_from(SHAPES))
        rg = self.draw(st.booleans())
        n = self.target()
        kind = self.draw(st.sampled_from(["randn", "rand", "ones", "linspace", "tensor"]))
        rg_text = ", requires_grad=True" if rg else ""
        if self.dtype:
            rg_text = f", dtype=torch.{self.dtype}" + rg_text
            if self.complex and kind in ("linspace", "rand"):
                kind = "randn"
        if kind == "linspace" and len(shape) == 1:
            expr = f"torch.linspace(-1.0, 1.0, {shape[0]}{rg_text})"
        elif kind == "tensor" and shape == ():
            expr = f"torch.tensor({self.draw(st.sampled_from(['2.0', '-0.5', '42.0']))}{rg_text})"
        elif kind == "rand":
            expr = f"torch.rand({shape_text(shape)}{rg_text})" if shape else f"torch.rand((){rg_text})"
        elif kind == "ones":
            expr = f"torch.ones({shape_text(shape)}{rg_text})" if shape else f"torch.ones((){rg_text})"
        else:
            expr = f"torch.randn({shape_text(shape)}{rg_text})" if shape else f"torch.randn((){rg_text})"
        return self.assign(n, Var(shape, rg=rg, leaf=True), expr)

    def unary(self) -> str | None:
        a = self.pick()
        if a is None:
            return None
        tpl = self.draw(st.sampled_from(COMPLEX_UNARY if self.complex else UNARY))
        return self.assign(self.target(), self.result(a, shape=self.vars[a].shape), tpl.format(a=a))

    def binary(self) -> str | None:
        a = self.pick()
        if a is None:
            return None
        sa = self.vars[a].shape
        b = self.pick(lambda v: broadcast(sa, v.shape) is not None)
        if b is None or self.draw(st.integers(0, 4)) == 0:
            lit = self.draw(st.sampled_from(["2", "0.5", "-3.0", "1e-3"]))
            return self.assign(self.target(), self.result(a, shape=sa), f"{a} * {lit}")
        shape = broadcast(sa, self.vars[b].shape)
        assert shape is not None
        tpl = self.draw(st.sampled_from(COMPLEX_BINARY if self.complex else BINARY))
        return self.assign(self.target(), self.result(a, b, shape=shape), tpl.format(a=a, b=b))

    def reduce(self) -> str | None:
        a = self.pick()
        if a is None:
            return None
        sa = self.vars[a].shape
        if sa and self.draw(st.booleans()):
            dim = self.draw(st.integers(-len(sa), len(sa) - 1))
            shape = sa[:dim % len(sa)] + sa[dim % len(sa) + 1:]
            fn = self.draw(st.sampled_from(["sum", "mean"]))
            return self.assign(self.target(), self.result(a, shape=shape), f"{a}.{fn}({dim})")
        tpl = self.draw(st.sampled_from(COMPLEX_REDUCE if self.complex else REDUCE))
        return self.assign(self.target(), self.result(a, shape=()), tpl.format(a=a))

    def reshape(self) -> str | None:
        """Views and copies that change shape: view, reshape, t, transpose, unsqueeze, index, slice."""
        a = self.pick()
        if a is None:
            return None
        v = self.vars[a]
        sa = v.shape
        options: list[tuple[str, Shape, bool]] = [
            (f"{a}.reshape(-1)", (max(1, _numel(sa)),) if sa else (1,), True),
            (f"{a}.unsqueeze(0)", (1,) + sa, True),
        ]
        if sa:
            options.append((f"{a}.view(-1)", (_numel(sa),), True))
            options.append((f"{a}[0]", sa[1:], True))
            if sa[0] >= 2:
                options.append((f"{a}[1:]", (sa[0] - 1,) + sa[1:], True))
            options.append((f"{a}[..., :1]", sa[:-1] + (1,), True))
        if len(sa) == 2:
            options.append((f"{a}.t()", (sa[1], sa[0]), True))
            options.append((f"{a}.transpose(0, 1)", (sa[1], sa[0]), True))
            options.append((f"{a}[:, 1]", (sa[0],), True))
            options.append((f"{a}.reshape({sa[1]}, {sa[0]})", (sa[1], sa[0]), True))
            options.append((f"{a}.T.contiguous()", (sa[1], sa[0]), False))
        if _numel(sa) == 6:
            options.append((f"{a}.view(2, 3)", (2, 3), True))
        expr, shape, is_view = self.draw(st.sampled_from(options))
        out = self.result(a, shape=shape)
        if is_view and v.rg and v.leaf or v.view_of_leaf:
            out = replace(out, view_of_leaf=is_view)
        return self.assign(self.target(), out, expr)

    def combine(self) -> str | None:
        a = self.pick()
        if a is None:
            return None
        sa = self.vars[a].shape
        b = self.pick(lambda v: v.shape == sa)
        if b is None:
            return None
        if self.draw(st.booleans()) and sa:
            shape = (sa[0] * 2,) + sa[1:]
            expr = f"torch.cat([{a}, {b}])"
        else:
            shape = (2,) + sa
            expr = f"torch.stack([{a}, {b}])"
        if _numel(shape) > 48:
            return None
        return self.assign(self.target(), self.result(a, b, shape=shape), expr)

    def matmul(self) -> str | None:
        a = self.pick(lambda v: len(v.shape) == 2)
        if a is None:
            return None
        sa = self.vars[a].shape
        b = self.pick(lambda v: len(v.shape) in (1, 2) and v.shape[0] == sa[1])
        if b is not None:
            sb = self.vars[b].shape
            shape = (sa[0],) + sb[1:]
            op = self.draw(st.sampled_from(["{a} @ {b}", "torch.matmul({a}, {b})"]))
            return self.assign(self.target(), self.result(a, b, shape=shape), op.format(a=a, b=b))
        b = self.pick(lambda v: v.shape == sa)
        if b is None:
            return None
        return self.assign(self.target(), self.result(a, b, shape=(sa[0], sa[0])), f"{a} @ {b}.t()")

    def inplace(self) -> str | None:
        ok = (lambda v: not v.view_of_leaf and not (v.rg and v.leaf)) if self.grad_on else (lambda _v: True)
        a = self.pick(ok)
        if a is None:
            return None
        v = self.vars[a]
        b = self.pick(lambda w: broadcast(v.shape, w.shape) == v.shape) if self.draw(st.booleans()) else None
        if b is not None:
            tpl = self.draw(st.sampled_from(INPLACE_TENSOR))
            rg = v.rg or (self.grad_on and self.vars[b].rg)
            self.vars[a] = replace(v, rg=rg, leaf=v.leaf and not rg)
            return tpl.format(a=a, b=b)
        if v.shape and self.draw(st.integers(0, 3)) == 0:
            rhs = self.draw(st.sampled_from(["1.5", "0.0", "float('nan')"]))
            return f"{a}[0] = {rhs}"
        return self.draw(st.sampled_from(COMPLEX_INPLACE if self.complex else INPLACE_SCALAR)).format(a=a)

    def names(self) -> str | None:
        """Rebinding without computing: alias, swap, del, detach."""
        a = self.pick()
        if a is None:
            return None
        kind = self.draw(st.sampled_from(["alias", "swap", "del", "detach", "detach_clone", "list", "dict"]))
        if kind in ("list", "dict"):
            b = self.pick()
            n = self.target()
            self.vars.pop(n, None)
            if kind == "list":
                return f"{n} = [{a}, {b}]"
            return f"{n} = {{'w': {a}, 'v': {b}}}"
        if kind == "alias":
            return self.assign(self.target(), self.vars[a], a)
        if kind == "swap":
            b = self.pick(lambda _v: True)
            if b is None or b == a:
                return None
            self.vars[a], self.vars[b] = self.vars[b], self.vars[a]
            return f"{a}, {b} = {b}, {a}"
        if kind == "del":
            del self.vars[a]
            return f"del {a}"
        expr = f"{a}.detach()" if kind == "detach" else f"{a}.detach().clone()"
        return self.assign(self.target(), Var(self.vars[a].shape), expr)

    def grad_ops(self) -> str | None:
        kind = self.draw(st.sampled_from(["retain", "read", "none", "zero", "requires"]))
        if kind == "retain":
            a = self.pick(lambda v: v.rg)
            if a is None:
                return None
            return f"{a}.retain_grad()"
        if kind == "requires":
            a = self.pick(lambda v: v.leaf and not v.rg)
            if a is None:
                return None
            self.vars[a] = replace(self.vars[a], rg=True)
            return f"{a}.requires_grad_()"
        a = self.pick(lambda v: v.rg and v.leaf and (v.has_grad or kind != "zero"))
        if a is None:
            return None
        if kind == "read":
            g = self.target()
            if not self.vars[a].has_grad:
                self.vars.pop(g, None)
                return f"{g} = {a}.grad"
            return self.assign(g, Var(self.vars[a].shape), f"{a}.grad")
        if kind == "none":
            self.vars[a] = replace(self.vars[a], has_grad=False)
            return f"{a}.grad = None"
        return f"{a}.grad.zero_()"

    def backward(self) -> str | None:
        a = self.pick(lambda v: v.rg) if self.draw(st.integers(0, 5)) else self.pick()
        if a is None:
            return None
        shape = self.vars[a].shape
        retain = self.draw(st.sampled_from(["", "retain_graph=True"]))
        kind = self.draw(st.sampled_from(["sum", "gradient", "scalar", "autograd", "grad"]))
        for n, v in self.vars.items():
            if v.rg and v.leaf:
                self.vars[n] = replace(v, has_grad=True)
        if self.complex:
            return f"{a}.abs().sum().backward({retain})"
        if kind == "gradient" and shape:
            g = self.draw(st.sampled_from([f"torch.ones_like({a})", f"torch.full_like({a}, 0.5)"]))
            return f"{a}.backward(gradient={g}{', ' + retain if retain else ''})"
        if kind == "scalar":
            return f"{a}.backward({retain})"
        if kind == "autograd":
            return f"torch.autograd.backward([{a}.sum()]{', ' + retain if retain else ''})"
        if kind == "grad":
            leaf = self.pick(lambda v: v.rg and v.leaf)
            if leaf is not None:
                g = self.target()
                self.vars[g] = Var(self.vars[leaf].shape)
                return f"{g}, = torch.autograd.grad({a}.sum(), [{leaf}], allow_unused=True, materialize_grads=True)"
        return f"{a}.sum().backward({retain})"

    def failing(self) -> str:
        a = self.pick()
        options = ['raise ValueError("boom")', "torch.ones(2) @ torch.ones(3)",
                   "torch.tensor([1.0]).backward()"]
        if a is not None:
            options += [f"{a}.view(5, 7)", f"{a}.item() + {a}.item()", f"{a}.backward()"]
        return self.draw(st.sampled_from(options))

    def hook(self) -> str | None:
        """A tensor hook: one that changes the gradient, one that only watches it, or removing one."""
        a = self.pick(lambda v: v.rg)
        if a is None:
            return None
        kind = self.draw(st.sampled_from(["scale", "watch", "replace", "remove", "post_accumulate"]))
        if kind == "remove":
            return "hooks[-1].remove() if hooks else None"
        if kind == "post_accumulate":
            if not (self.vars[a].leaf and self.vars[a].rg):
                return None
            return f"hooks.append({a}.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.sum().item())))"
        fn = {"scale": "lambda g: g * 2", "watch": "lambda g: seen.append(g.sum().item())",
              "replace": "lambda g: torch.ones_like(g)"}[kind]
        return f"hooks.append({a}.register_hook({fn}))"

    def view_chain(self) -> str | None:
        """A view of a view, then an in-place change through it (the base changes too)."""
        a = self.pick(lambda v: len(v.shape) >= 1 and _numel(v.shape) >= 2)
        if a is None:
            return None
        v = self.vars[a]
        first = f"{a}.view(-1)" if self.draw(st.booleans()) else f"{a}.reshape(-1)[0:]"
        second = self.draw(st.sampled_from(["[1:]", "[::2]", "[:1]", ".unsqueeze(0)[0]"]))
        n = self.target()
        size = _numel(v.shape)
        shape = {"[1:]": (size - 1,), "[::2]": ((size + 1) // 2,), "[:1]": (1,), ".unsqueeze(0)[0]": (size,)}[second]
        self.vars[n] = replace(self.result(a, shape=shape), view_of_leaf=v.rg and v.leaf or v.view_of_leaf)
        line = f"{n} = {first}{second}"
        if self.draw(st.booleans()):
            op = self.draw(st.sampled_from(["mul_(2)", "add_(1)", "zero_()"]))
            line += f"\n{n}.{op}"
        return line

    def double_backward(self) -> str | None:
        """``create_graph=True``: the gradient is itself a graph, differentiated again."""
        a = self.pick(lambda v: v.rg and v.leaf)
        if a is None or self.complex:
            return None
        f = self.draw(st.sampled_from(["({a} ** 3).sum()", "{a}.sin().sum()", "({a} * {a}.exp()).sum()",
                                       "torch.tanh({a}).pow(2).sum()"])).format(a=a)
        g, h = self.target(), self.target()
        kind = self.draw(st.sampled_from(["grad", "backward"]))
        if kind == "grad":
            self.vars[g] = Var(self.vars[a].shape, rg=True, leaf=False)
            second = self.draw(st.sampled_from([f"({g} * {g}).sum().backward()", f"{g}.sum().backward()",
                                                f"{h}, = torch.autograd.grad({g}.sum(), [{a}])"]))
            if second.startswith(h):
                self.vars[h] = Var(self.vars[a].shape)
            return f"{g}, = torch.autograd.grad({f}, [{a}], create_graph=True)\n{second}"
        self.vars[a] = replace(self.vars[a], has_grad=True)
        return f"{a}.grad = None\n({f}).backward(create_graph=True)\n{g} = {a}.grad.sum()\n{a}.grad = None\n" \
               f"{g}.backward()"

    def simple(self, allow_fail: bool = True, wide: bool = False) -> str | None:
        kinds = ["new", "unary", "unary", "binary", "binary", "reduce", "reshape", "combine", "matmul",
                 "inplace", "inplace", "names", "grad_ops", "backward"]
        if allow_fail:
            kinds.append("failing")
        if wide:
            kinds += ["hook", "view_chain", "view_chain", "double_backward"]
        if self.complex:
            kinds = [k for k in kinds if k not in ("matmul", "combine", "grad_ops")]
        kind = self.draw(st.sampled_from(kinds))
        fn = {
            "new": self.new_tensor, "unary": self.unary, "binary": self.binary, "reduce": self.reduce,
            "reshape": self.reshape, "combine": self.combine, "matmul": self.matmul, "inplace": self.inplace,
            "names": self.names, "grad_ops": self.grad_ops, "backward": self.backward, "failing": self.failing,
            "hook": self.hook, "view_chain": self.view_chain, "double_backward": self.double_backward,
        }[kind]
        return fn()

    def shape_keeping(self) -> str | None:
        """A loop body statement: the same statement may run several times."""
        kind = self.draw(st.sampled_from(["unary", "inplace", "binary_self"]))
        a = self.pick()
        if a is None:
            return None
        if kind == "unary":
            tpl = self.draw(st.sampled_from(UNARY))
            self.vars[a] = self.result(a, shape=self.vars[a].shape)
            return f"{a} = {tpl.format(a=a)}"
        if kind == "binary_self":
            b = self.pick(lambda v: broadcast(self.vars[a].shape, v.shape) == self.vars[a].shape)
            if b is None:
                return None
            tpl = self.draw(st.sampled_from(BINARY))
            self.vars[a] = self.result(a, b, shape=self.vars[a].shape)
            return f"{a} = {tpl.format(a=a, b=b)}"
        return self.inplace()

    def function(self) -> list[str]:
        """A function whose locals are traced too, then a call of it."""
        a = self.pick()
        if a is None:
            return []
        saved = dict(self.vars)
        self.vars = {"t": self.vars[a]}
        body = [s for s in (self.shape_keeping() for _ in range(self.draw(st.integers(1, 3)))) if s]
        t = self.vars.get("t")
        self.vars = saved
        if t is None or not body:
            return []
        n = self.target()
        self.vars[n] = t if self.draw(st.booleans()) else Var((), rg=t.rg, leaf=not t.rg)
        ret = "t" if self.vars[n] is t else "t.sum()"
        return ["def fn(t):"] + ["    " + line for line in body] + [f"    return {ret}", f"{n} = fn({a})"]

    def block(self) -> list[str]:
        kind = self.draw(st.sampled_from(["no_grad", "loop", "loop_backward", "function"]))
        if kind == "function":
            return self.function()
        body: list[str] = []
        if kind == "no_grad":
            self.grad_on = False
            for _ in range(self.draw(st.integers(1, 3))):
                s = self.simple(allow_fail=False)
                if s is not None and "backward" not in s and "autograd.grad" not in s:
                    body.append(s)
            self.grad_on = True
            head = "with torch.no_grad():"
        else:
            for _ in range(self.draw(st.integers(1, 2))):
                s = self.shape_keeping()
                if s is not None:
                    body.append(s)
            if kind == "loop_backward":
                b = self.backward()
                if b is not None:
                    body.append(b)
            head = f"for i in range({self.draw(st.integers(1, 3))}):"
        if not body:
            return []
        return [head] + ["    " + line for line in body]


def _numel(shape: Shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@st.composite
def programs(draw: st.DrawFn) -> str:
    gen = Gen(draw)
    seed = draw(st.integers(0, 2**16))
    lines = ["import torch", f"torch.manual_seed({seed})", gen.new_tensor()]
    for _ in range(draw(st.integers(3, 18))):
        if draw(st.integers(0, 7)) == 0:
            lines += gen.block()
        else:
            s = gen.simple(allow_fail=draw(st.integers(0, 9)) == 0)
            if s is not None:
                lines.append(s)
    return "\n".join(lines) + "\n"


@st.composite
def wide_programs(draw: st.DrawFn, dtype: str = "") -> str:
    """Programs of the first half plus hooks, views of views and double backward, in one dtype."""
    gen = Gen(draw, dtype)
    seed = draw(st.integers(0, 2**16))
    lines = ["import torch", f"torch.manual_seed({seed})", "hooks = []", "seen = []", gen.new_tensor()]
    for _ in range(draw(st.integers(3, 12))):
        s = gen.simple(allow_fail=draw(st.integers(0, 9)) == 0, wide=True)
        if s is not None:
            lines.append(s)
    return "\n".join(lines) + "\n"


@st.composite
def module_programs(draw: st.DrawFn) -> str:
    """A Linear or a small Sequential, a loss, backward, a hand-written SGD step, and again."""
    seed = draw(st.integers(0, 2**16))
    dtype = draw(st.sampled_from(["", ".double()"]))
    model = draw(st.sampled_from([
        "torch.nn.Linear(3, 2)",
        "torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))",
        "torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2), torch.nn.Sigmoid())",
        "torch.nn.Sequential(torch.nn.Linear(3, 3, bias=False), torch.nn.ReLU(), torch.nn.Linear(3, 2))",
    ]))  # ReLU(inplace=True): see test_value_saved_after_an_inplace_change_in_the_same_statement
    loss = draw(st.sampled_from(["out.pow(2).mean()", "torch.nn.functional.mse_loss(out, target)",
                                 "out.sum()", "torch.nn.functional.cross_entropy(out, labels)"]))
    lines = ["import torch", f"torch.manual_seed({seed})", f"model = {model}{dtype}",
             f"xs = torch.randn(5, 3){dtype}", f"target = torch.randn(5, 2){dtype}",
             "labels = torch.tensor([0, 1, 1, 0, 1])"]
    for _ in range(draw(st.integers(1, 3))):
        lines += ["out = model(xs)", f"loss = {loss}"]
        extra = draw(st.sampled_from(["", "out.retain_grad()", "h = out.register_hook(lambda g: g * 0.5)",
                                      "model.zero_grad()"]))
        if extra:
            lines.append(extra)
        lines.append("loss.backward()")
        step = draw(st.sampled_from(["sgd", "data", "none", "optim"]))
        if step == "sgd":
            lines += ["with torch.no_grad():", "    for p in model.parameters():", "        p -= 0.1 * p.grad"]
        elif step == "data":
            lines += ["for p in model.parameters():", "    p.data = p.data - 0.1 * p.grad.data"]
        elif step == "optim":
            lines += ["opt = torch.optim.SGD(model.parameters(), lr=0.1)", "opt.step()", "opt.zero_grad()"]
    return "\n".join(lines) + "\n"
