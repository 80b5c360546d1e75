"""The tensors a learner's own objects hold are named by their attributes.

``class Linear: self.W = ...`` in a from-scratch lesson showed ``W`` as an unnamed ``t1``: only
variables, containers and modules were named. The corpus programs ``objects_*`` check the names
against the live objects step by step; these tests check which objects are looked into, and that
looking runs none of their code.
"""

from __future__ import annotations

import types

import torch

import gradtrace
from gradtrace.tracer import safe


class FileBacked:  # a class of a module with a file (this test module): a library's, not the learner's
    def __init__(self) -> None:
        self.t = torch.ones(1)


def _made(source: str, ns: dict) -> object:
    exec(source, ns)
    return ns["obj"]


def test_only_instances_of_the_program_s_own_classes_are_looked_into() -> None:
    source = "import torch\nclass C:\n    pass\nobj = C()\n"
    assert safe.is_learner_object(_made(source, {}))  # code run without a __name__ (trace_code's default)
    assert safe.is_learner_object(_made(source, {"__name__": "__main__"}))
    assert safe.is_learner_object(_made(source, {"__name__": "lesson_3"}))  # no such module
    assert not safe.is_learner_object(FileBacked())
    assert not safe.is_learner_object(types.SimpleNamespace(t=torch.ones(1)))
    assert not safe.is_learner_object(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1))
    assert not safe.is_learner_object(_made("class E(Exception):\n    pass\nobj = E()\n", {}))
    assert not safe.is_learner_object(_made("class M(type):\n    pass\nobj = M('K', (), {})\n", {}))
    assert not safe.is_learner_object(3) and not safe.is_learner_object("text")


def test_reading_attributes_runs_no_property_and_no_getattr() -> None:
    source = (
        "import torch\n"
        "seen = []\n"
        "class C:\n"
        "    __slots__ = ('s', 'unset', '__dict__')\n"
        "    def __init__(self):\n"
        "        self.s = torch.ones(2)\n"
        "        self.d = torch.zeros(2)\n"
        "        self._hidden = torch.ones(1)\n"
        "    @property\n"
        "    def p(self):\n"
        "        seen.append('p')\n"
        "        return torch.ones(3)\n"
        "    def __getattr__(self, name):\n"
        "        seen.append(name)\n"
        "        raise AttributeError(name)\n"
        "    def __getattribute__(self, name):\n"
        "        seen.append('get ' + name)\n"
        "        return object.__getattribute__(self, name)\n"
        "obj = C()\n"
    )
    ns: dict = {}
    obj = _made(source, ns)
    items = dict(safe.object_items(obj))
    assert ns["seen"] == []
    assert set(items) == {"s", "d"}  # the unset slot and the _hidden attribute are not names
    assert items["s"] is object.__getattribute__(obj, "s") and items["d"] is object.__getattribute__(obj, "d")


def test_a_from_scratch_layer_is_named_by_its_attributes() -> None:
    source = (
        "import torch\n"
        "class Linear:\n"
        "    def __init__(self):\n"
        "        self.W = torch.ones(2, 1, requires_grad=True)\n"
        "layers = [Linear(), Linear()]\n"
        "out = (torch.ones(1, 2) @ layers[0].W).sum()\n"
    )
    ns: dict = {}
    trace = gradtrace.trace_code(source, ns)
    last = trace.steps[-1]
    for i in (0, 1):
        tid = last.bindings[f"layers[{i}].W"]
        assert last.tensors[tid].shape == tuple(ns["layers"][i].W.shape)
    assert last.bindings["layers[0].W"] != last.bindings["layers[1].W"]


def test_a_class_is_not_kept_alive_by_the_reading() -> None:
    import gc
    import weakref

    ns: dict = {}
    obj = _made("import torch\nclass C:\n    __slots__ = ('t',)\nobj = C()\nobj.t = torch.ones(1)\n", ns)
    assert [k for k, _v in safe.object_items(obj)] == ["t"]
    gone = weakref.ref(type(obj))
    del obj
    ns.clear()
    gc.collect()
    assert gone() is None
