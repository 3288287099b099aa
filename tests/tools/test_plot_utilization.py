#!/usr/bin/python3
"""tools/plot_utilization.py groups the units of utilization.csv by kind, every card's together.

A run on several cards names each card's units "card N group/name": each ring link of such a run
was a kind of its own (a 4-card decode step drew 99 rows, one per link). Exit 0 when the kinds
are right, 1 with the wrong ones listed.
"""
import importlib.util
import os
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, TOOLS)
spec = importlib.util.spec_from_file_location("plot_utilization", os.path.join(TOOLS, "plot_utilization.py"))
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

EXPECTED = {
    # One card.
    "memory/ch 3": "memory",
    "ring/cw 0->1": "ring",
    "ring/mem port 0 rd": "ring",
    "core 3/pt.1": "pt",
    "core 0/sfp.0": "sfp",
    "core 0/dma in": "dma",
    "core 0/dma out": "dma",
    "pcie/card 0 up": "pcie",
    # Several cards: the same kinds.
    "card 2 memory/ch 3": "memory",
    "card 0 ring/ccw 17->16": "ring",
    "card 1 ring/mem port 1 wr": "ring",
    "card 3 core 30/pt.0": "pt",
    "card 3 core 30/sfp.1": "sfp",
    "card 1 core 7/dma in": "dma",
    "pcie/drawer 0 uplink up": "pcie",
    "pcie/card 3 reduce (sfp)": "pcie",
}

wrong = [f"{c!r}: {tool.kind_of(c)!r}, expected {k!r}" for c, k in EXPECTED.items() if tool.kind_of(c) != k]
for w in wrong:
    print(w)
print(f"{len(EXPECTED) - len(wrong)} of {len(EXPECTED)} columns grouped right")
sys.exit(1 if wrong else 0)
