"""Our weight-storage widget written as an ordinary Streamlit app, for bench/streamlit/compare.py.

Same inputs (a parameter count and the bits per parameter, bounds and defaults from the widget's Params),
same numbers (the widget's compute over our engine), same result: GB and GiB, the working, a bar per width
against 32-bit storage, and the caveat. Plain st elements only, no custom component.

Run: .venv-streamlit/bin/streamlit run bench/streamlit/weight_storage_app.py  (`make bench-streamlit` sets it up)
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.engine.text import gb, gib, num  # noqa: E402
from app.widgets.weight_storage import Params, compute  # noqa: E402

BITS = {32: "32 (fp32)", 16: "16 (bf16 / fp16)", 8: "8 (fp8 / int8)", 4: "4 (int4)"}  # the widget's choices
FIELD = Params.model_json_schema()["properties"]["parameters"]

st.title("Weight-storage calculator")
parameters = st.number_input(
    "Parameters",
    min_value=float(FIELD["minimum"]),
    max_value=float(FIELD["maximum"]),
    value=float(FIELD["default"]),
    step=1e9,
    format="%.0f",
    help="A count, such as 7000000000.",
)
bits = st.selectbox("Bits per parameter", list(BITS), index=list(BITS).index(Params().bits), format_func=BITS.get)

r = compute(Params(parameters=parameters, bits=bits))
with st.container(key="result"):  # the class st-key-result is the hook compare.py watches
    st.markdown(f"### {gb(r.bytes)} = {gib(r.bytes)}")
    st.caption(
        f"{num(r.parameters)} parameters × {r.bits} bits ÷ 8 = {num(r.bytes)} bytes. GB counts 10⁹ bytes; "
        "GiB counts 2³⁰ = 1,073,741,824 bytes, which is what nvidia-smi's MiB figures add up to."
    )
    st.write("Weight storage at each width, bar length relative to 32-bit storage:")
    for bar in r.bars:
        mark = " (your choice)" if bar.selected else ""
        st.progress(bar.fraction_of_fp32, text=f"{bar.bits}-bit: {gb(bar.bytes, 1)}{mark}")
    st.info(
        "**Weights only.** This excludes runtime memory, the KV cache, activations, gradients, optimizer state "
        "and quantization metadata, so it does not tell you whether a model fits on a GPU."
    )
