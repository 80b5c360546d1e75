"""The plain-text rendering of a :class:`~gradtrace.explain.walkthrough.Walkthrough`.

Place in the pipeline: tracer -> model -> **explain** -> render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import op_name
from ._numbers import per_output

if TYPE_CHECKING:
    from .walkthrough import GradValue, WalkStep, Walkthrough


#: what is said of a leaf whose .grad is None after a backward() that sent it a gradient
CLEARED = ("a hook that ran after accumulation (such as register_post_accumulate_grad_hook) set .grad back "
           "to None")


def _g(value: GradValue | None) -> str:
    return "None" if value is None else value.text


def _title(step: WalkStep) -> str:
    name = op_name(step.name)
    return f"{step.node} {name}" + (f" ({step.label})" if step.label else "")


def _root(w: Walkthrough) -> str:
    """The root as the text twin's reverse pass says it: ``y (t2)``, ``t5``, or a tensor no name holds."""
    if w.root_name and w.root_tensor and w.root_name != w.root_tensor:
        return f"{w.root_name} ({w.root_tensor})"
    if w.root_name:
        return w.root_name
    node = next((n for n in w.nodes if n.id == w.root), None)
    if node is not None:
        return f"a tensor no name holds (its grad_fn is {node.id} ({op_name(node.name)}))"
    return f"a tensor no name holds (its grad_fn is {w.root})" if w.root else "a tensor no name holds"


def _head(w: Walkthrough) -> list[str]:
    lines = [f"Reverse pass from {' and '.join([_root(w), *(label for label, _ in w.others)])}, "
             "in the order PyTorch ran the nodes."]
    if w.vjp:
        lines.append(f"backward(gradient=v) with v = {w.seed.text}: every gradient below is vᵀ·J, "
                     "a vector-Jacobian product, not a full Jacobian.")
    elif w.root_name:
        lines.append(f"It starts with ∂{w.root_name}/∂{w.root_name} = {w.seed.text}.")
    else:
        lines.append(f"It starts with that tensor's gradient with respect to itself: {w.seed.text}.")
    for label, seed in w.others:
        lines.append(f"It also starts from {label}, with gradient {seed}: one pass runs from all of them, "
                     "and their gradients add up where the paths meet.")
    if w.note:
        lines.append(f"({w.note})")
    if w.call == "autograd.grad":
        lines.append("torch.autograd.grad() returns these gradients; it adds nothing to any .grad.")
    if w.retain_graph:
        lines.append("The graph is kept (retain_graph=True, which create_graph=True also sets): its saved values "
                     "stay, so it can be walked again.")
    return lines


def _step_lines(step: WalkStep) -> list[str]:
    lines = [f"{step.order:>3}. {_title(step)}"]
    if len(step.grad_in) > 1:
        lines.append(f"       grad in: {per_output(step.grad_in, _g)}")
    elif step.parts_sum:
        lines.append(f"       grad in: {step.parts_sum}   (paths meet here and add up)")
    else:
        lines.append(f"       grad in: {', '.join(_g(g) for g in step.grad_in)}")
    if step.hook:
        lines.append(f"       ({step.hook})")
    had = dict(step.retained_before)
    for label, value in step.retained:
        old = had.get(label)
        if old is not None and len(step.grad_in) == 1 and step.grad_in[0] is not None:
            lines.append(f"       {label}.grad is kept (retain_grad): {old.text} (already in .grad) + "
                         f"{step.grad_in[0].text} = {value.text}   (backward() adds to it, as to a leaf's)")
        else:
            lines.append(f"       {label}.grad is kept (retain_grad): {value.text}")
    if step.is_accumulate:
        lines += _accumulate_lines(step)
        return lines
    reason = f"   ({step.reason})" if step.reason else ""
    lines.append(f"       rule: {step.rule}{reason}")
    for out in step.outputs:
        target = f"{out.target}" + (f" ({out.target_label})" if out.target_label else "")
        if out.formula is not None and out.matches:
            lines.append(f"       → {target}: {out.formula}")
        elif out.replaced is not None:
            lines.append(f"       → {target}: {_g(out.grad)}   (a module's backward hook replaced "
                         f"{_g(out.replaced)}, which arrived)")
        elif out.formula is not None and out.matches is False:
            lines.append(f"       → {target}: torch computed {_g(out.grad)} (the formula gives {out.formula})")
        else:
            lines.append(f"       → {target}: {_g(out.grad)}")
    if step.note and step.note != step.rule:  # a node without a formula says so once, in its rule
        lines.append(f"       ({step.note})")
    return lines


def _accumulate_lines(step: WalkStep) -> list[str]:
    incoming = step.grad_in[0] if step.grad_in else None
    if step.grad_before is None and step.grad_after is None and incoming is not None:
        return [f"       {step.label}.grad = None after backward(), though {incoming.text} arrived: {CLEARED}"]
    if step.grad_before is None:
        return [f"       {step.label}.grad = {_g(step.grad_after)}   (.grad was None)"]
    return [f"       {step.label}.grad = {step.grad_before.text} + {_g(incoming)} = {_g(step.grad_after)}"
            "   (backward() adds to .grad; it does not overwrite it)"]


def walkthrough_text(w: Walkthrough, max_steps: int = 200) -> str:
    lines = _head(w)
    for step in w.steps[:max_steps]:
        lines += _step_lines(step)
    if len(w.steps) > max_steps:
        lines.append(f"  … {len(w.steps) - max_steps} more nodes")
    if w.raised:
        lines.append(f"(the statement stopped with {w.raised} after the nodes above ran)")
    if w.leaves:
        lines.append("Result:")
        lines += [f"  {leaf.label}.grad = {leaf.chain}" for leaf in w.leaves]
        hooked = [s.label or s.node for s in w.steps if s.hook]
        if hooked:
            lines.append(f"  (a hook changed the gradient reaching {', '.join(hooked)}; "
                         "the figures above are the ones PyTorch used, after the hook)")
    return "\n".join(lines)
