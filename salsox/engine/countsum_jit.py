"""Native code for count-sum formulas (optional: needs llvmlite, ``pip install "salsox[jit]"``).

The engine evaluates a :class:`~salsox.plugins.CountSumLoss` formula node by node, one loop over
a block of draws x candidate slots per node (countsum_dense.hpp). With llvmlite installed, the
formula's per-draw-and-slot part is compiled once per formula into a single loop (LLVM IR built
here from the validated node list, never from source text), which keeps every intermediate value
in registers: the engine calls it once per block instead of running the nodes one by one.

The compiled loop performs the same IEEE operations, in the same order, as the node loops (no
fast-math flags, so nothing is contracted or reassociated; ``log``, ``exp`` and ``pow`` call the
same C library functions), and adds each slot's values over the draws in the same order, so a
formula's scores and estimates are bit-identical with and without it (tests/test_countsum_jit.py,
which turns the kernel off through ``_core.EngineOptions.countsum_jit``).

A formula is compiled whenever llvmlite can be imported; when it cannot compile one, a warning
says so and the node loops score it (same results, slower).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["attach_kernel", "kernel_available", "why_not_compiled"]

# Node shapes (countsum_loss.hpp, CsShape): what a value varies with.
SCALAR, SLOT, DRAW, FULL = 0, 1, 2, 3
# Lanes per vector: four doubles (one AVX2 register; LLVM splits them on older CPUs).
LANES = 4

_lock = threading.Lock()
# Compiled kernels by program (constants aside), kept for the life of the process (a formula's
# code is small, and a search may hold the address on any thread).
_kernels: Dict[Tuple[Any, ...], Optional[Tuple[Any, int]]] = {}  # None: could not compile
_llvm: Optional[Any] = None


def kernel_available() -> bool:
    """Whether formulas can be compiled here (llvmlite importable and usable)."""
    try:
        _binding()
    except Exception:  # not installed, or not usable
        return False
    return True


def why_not_compiled(compiled: Any) -> str:
    """Why ``compiled`` (a ``_core.CountSumLoss`` that :func:`attach_kernel` saw) has no
    machine code: a formula with no dense part, llvmlite missing, or a failed compilation."""
    if compiled.program[compiled.result][5] != FULL:
        return "the formula does not vary with both the draw and the cluster: nothing to compile"
    if not kernel_available():
        return 'llvmlite is not installed: pip install "salsox[jit]"'
    return "llvmlite could not compile it (see the warning)"


def _binding() -> Any:
    global _llvm
    if _llvm is None:
        import llvmlite.binding as llvm  # optional dependency

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _llvm = llvm
    return _llvm


def attach_kernel(compiled: Any) -> bool:
    """Compiles ``compiled``'s (a ``_core.CountSumLoss``) dense formula and hands the engine the
    code; returns whether it did. A formula whose value does not vary with both the draw and the
    slot has no dense kernel."""
    program, result = compiled.program, compiled.result
    if program[result][5] != FULL:
        return False
    try:
        llvm = _binding()
    except ImportError:
        return False
    except Exception as err:  # an llvmlite this code does not know: the node loops still work
        return _cannot_compile(compiled, err)
    # The code reads every scalar, constants included, from the engine's values (scal), so one
    # kernel serves every value of a formula's parameters (a tune sweep compiles once).
    key = (tuple((op, a, b, c, shape) for op, a, b, c, _value, shape in program), result)
    with _lock:
        if key not in _kernels:
            try:
                _kernels[key] = _compile(llvm, program, result)
            except Exception as err:
                _kernels[key] = None  # not tried again for this formula
                return _cannot_compile(compiled, err)
        kernel = _kernels[key]
    if kernel is None:
        return False
    compiled.set_dense_kernel(kernel[1])
    return True


def _cannot_compile(compiled: Any, err: Exception) -> bool:
    """A warning, and the node loops (same results, slower)."""
    warnings.warn(
        f"{compiled.label}: could not compile the formula with llvmlite ({type(err).__name__}: {err}); "
        "the engine's node loops score it instead (same results, slower)",
        RuntimeWarning,
        stacklevel=4,
    )
    return False


def _reach(program: Sequence[Tuple[Any, ...]], result: int) -> List[bool]:
    """Nodes the result depends on through Full nodes (the others are the engine's to compute)."""
    need = [False] * len(program)
    need[result] = True
    for v in range(len(program) - 1, -1, -1):
        op, a, b, c, _value, shape = program[v]
        if not need[v] or shape != FULL or op == "cell":
            continue
        for u in (a, b, c):
            if u >= 0:
                need[u] = True
    return need


def _compile(llvm: Any, program: Sequence[Tuple[Any, ...]], result: int) -> Tuple[Any, int]:
    """The kernel's module, built, optimised and loaded; returns (engine, address).

    Signature (countsum_loss.hpp, CsDenseKernel)::

        void kernel(int64 nb, int64 Q, double** full, double** draw, double** slot, double* scal,
                    double* acc)

    For each group of LANES slots k0.., then each draw b < nb in order, acc[k] += the result at
    (b, k), reading a Cell leaf v at full[v][b * Q + k], a per-draw node at draw[v][b], a
    per-slot node at slot[v][k] and a scalar at scal[v]. The last group reads and writes up to
    LANES - 1 slots past Q (the engine's buffers have that slack; those lanes are never read).
    """
    from llvmlite import ir

    dbl = ir.DoubleType()
    vec = ir.VectorType(dbl, LANES)
    i64 = ir.IntType(64)
    ptr = ir.PointerType()
    module = ir.Module(name="salsox_countsum")
    module.triple = llvm.get_process_triple()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [i64, i64, ptr, ptr, ptr, ptr, ptr]), "kernel")
    nb, Q, full, draw, slot, scal, acc = fn.args
    entry = fn.append_basic_block("entry")
    k_head = fn.append_basic_block("k_head")
    b_body = fn.append_basic_block("b_body")
    k_tail = fn.append_basic_block("k_tail")
    done = fn.append_basic_block("done")
    builder = ir.IRBuilder(entry)
    intrinsics: Dict[str, Any] = {}

    def intrinsic(name: str, arity: int) -> Any:
        if name not in intrinsics:
            intrinsics[name] = ir.Function(module, ir.FunctionType(vec, [vec] * arity), f"llvm.{name}.v{LANES}f64")
        return intrinsics[name]

    def splat(x: Any) -> Any:
        v = ir.Constant(vec, ir.Undefined)
        for lane in range(LANES):
            v = builder.insert_element(v, x, ir.Constant(ir.IntType(32), lane))
        return v

    def array_of(table: Any, v: int) -> Any:
        return builder.load(builder.gep(table, [ir.Constant(i64, v)], source_etype=ptr), typ=ptr)

    need = _reach(program, result)
    values: Dict[int, Any] = {}
    # Scalars and the arrays' base addresses, once per call.
    bases: Dict[int, Any] = {}
    for v, (op, _a, _b, _c, _value, shape) in enumerate(program):
        if not need[v]:
            continue
        if shape == SCALAR:
            values[v] = splat(builder.load(builder.gep(scal, [ir.Constant(i64, v)], source_etype=dbl), typ=dbl))
        elif shape == SLOT:
            bases[v] = array_of(slot, v)
        elif shape == DRAW:
            bases[v] = array_of(draw, v)
        elif op == "cell":
            bases[v] = array_of(full, v)
    builder.branch(k_head)

    # Per group of slots: the accumulators and the per-slot values.
    builder.position_at_end(k_head)
    k0 = builder.phi(i64, "k0")
    k0.add_incoming(ir.Constant(i64, 0), entry)
    acc_at = builder.gep(acc, [k0], source_etype=dbl)
    acc_in = builder.load(acc_at, typ=vec, align=8)
    for v, base in bases.items():
        if program[v][5] == SLOT:
            values[v] = builder.load(builder.gep(base, [k0], source_etype=dbl), typ=vec, align=8)
    builder.branch(b_body)

    # Per draw: the per-draw values, the Full nodes in topological order, the sum.
    builder.position_at_end(b_body)
    row = builder.phi(i64, "b")
    row.add_incoming(ir.Constant(i64, 0), k_head)
    total = builder.phi(vec, "total")
    total.add_incoming(acc_in, k_head)
    at = builder.add(builder.mul(row, Q), k0)
    zero = ir.Constant(vec, [0.0] * LANES)
    one = ir.Constant(vec, [1.0] * LANES)

    def as_double(mask: Any) -> Any:
        return builder.select(mask, one, zero)

    def nonzero(x: Any) -> Any:
        return builder.fcmp_unordered("!=", x, zero)

    for v, (op, a, b, c, _value, shape) in enumerate(program):
        if not need[v] or shape == SCALAR or shape == SLOT:
            continue
        if shape == DRAW:
            x = builder.load(builder.gep(bases[v], [row], source_etype=dbl), typ=dbl)
            values[v] = splat(x)
            continue
        if op == "cell":
            values[v] = builder.load(builder.gep(bases[v], [at], source_etype=dbl), typ=vec, align=8)
            continue
        values[v] = _operation(builder, op, values.get(a), values.get(b), values.get(c), intrinsic, as_double,
                               nonzero, zero)
    summed = builder.fadd(total, values[result])
    total.add_incoming(summed, b_body)
    row_next = builder.add(row, ir.Constant(i64, 1))
    row.add_incoming(row_next, b_body)
    builder.cbranch(builder.icmp_signed("<", row_next, nb), b_body, k_tail)

    builder.position_at_end(k_tail)
    builder.store(summed, acc_at, align=8)
    k_next = builder.add(k0, ir.Constant(i64, LANES))
    k0.add_incoming(k_next, k_tail)
    builder.cbranch(builder.icmp_signed("<", k_next, Q), k_head, done)
    builder.position_at_end(done)
    builder.ret_void()

    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    target = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3
    )
    passes = llvm.create_pass_builder(target, llvm.create_pipeline_tuning_options(speed_level=3))
    passes.getModulePassManager().run(parsed, passes)
    engine = llvm.create_mcjit_compiler(parsed, target)
    engine.finalize_object()
    return engine, int(engine.get_function_address("kernel"))


def _operation(builder: Any, op: str, x: Any, y: Any, z: Any, intrinsic: Any, as_double: Any, nonzero: Any,
               zero: Any) -> Any:
    """One node's operation on vectors, as the engine's elementary operations (countsum_loss.hpp)
    define it: comparisons and logic give 1 or 0, where(c, a, b) takes a where c != 0, Python's
    min and max keep the first argument unless the second is strictly smaller (larger)."""
    if op == "neg":
        return builder.fneg(x)
    if op == "not":
        return as_double(builder.fcmp_ordered("==", x, zero))
    if op in ("sqrt", "log", "log2", "exp"):
        return builder.call(intrinsic(op, 1), [x])
    if op == "abs":
        return builder.call(intrinsic("fabs", 1), [x])
    if op == "pow":
        return builder.call(intrinsic("pow", 2), [x, y])
    arithmetic = {"add": builder.fadd, "sub": builder.fsub, "mul": builder.fmul, "div": builder.fdiv}
    if op in arithmetic:
        return arithmetic[op](x, y)
    ordered = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "=="}
    if op in ordered:
        return as_double(builder.fcmp_ordered(ordered[op], x, y))
    if op == "ne":
        return as_double(builder.fcmp_unordered("!=", x, y))
    if op == "min":
        return builder.select(builder.fcmp_ordered("<", y, x), y, x)
    if op == "max":
        return builder.select(builder.fcmp_ordered("<", x, y), y, x)
    if op == "and":
        return as_double(builder.and_(nonzero(x), nonzero(y)))
    if op == "or":
        return as_double(builder.or_(nonzero(x), nonzero(y)))
    if op == "where":
        return builder.select(nonzero(x), y, z)
    raise ValueError(f"count-sum kernel: no operation {op!r}")
