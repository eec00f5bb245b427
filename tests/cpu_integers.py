"""Whether this CPU multiplies int8 exactly in onnxruntime's integer kernels.

The default encoder multiplies int8 activations by int8 weights (``MatMulIntegerToFloat``). On x86 with
VNNI (``avx512_vnni`` or ``avx_vnni``) they are exact; on AVX2 without it the encoder's vectors come out
further from the fp32 encoder's (measured on an AMD EPYC with AVX2 only: cosine 0.954 at worst, 0.990 on
average, over the agreement set), most likely because onnxruntime's kernels there add pairs of products
in 16 bits. Tests whose figures depend on it read this; outside Linux the products are taken as exact.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def exact_integer_products() -> bool:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    lines = (line for line in text.splitlines() if line.startswith("flags"))
    flags = next((line.split(":", 1)[1].split() for line in lines), None)
    if flags is None:  # not x86 (no "flags" line): taken as exact
        return True
    return "avx512_vnni" in flags or "avx_vnni" in flags
