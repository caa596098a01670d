"""The model's inventory of the scoreboards (``hdl/blocks/scoreboard.py``): the per-warp table
of seed 002 Fig 8a and the masked table of Fig 8b, both in flip-flops."""

from __future__ import annotations

from reconverge.golden.blocks import MaskedScoreboardParams, ScoreboardParams
from reconverge.golden.blocks.scoreboard import OPERANDS
from reconverge.golden.cost.inventory import Inventory, decode, pick, reduce


def scoreboard(p: ScoreboardParams) -> Inventory:
    """Seed 002 Fig 8a: per warp ``entries`` entries of (register id, valid bit); the issue
    port and each lookup port read their warp's set; the write-backs (a cycle ahead) clear
    entries at the clock edge."""
    return _table(p)


def masked_scoreboard(p: MaskedScoreboardParams) -> Inventory:
    """Seed 002 Sec 3.3.2, Fig 8b: as Fig 8a with an R-mask of W bits per entry instead of the
    valid bit: write-backs clear their lanes, a reservation of a held register merges its mask
    (Fig 9 state 5), a lookup hits only an entry sharing a lane with the instruction."""
    return _table(p)


def seen_bits(p: ScoreboardParams) -> int:
    """Bits of an entry as a read port selects it: register id and valid bit or R-mask."""
    return p.reg_bits + (p.warp_size if p.masked else 1)


def _table(p: ScoreboardParams) -> Inventory:
    """Both tables: ``p.masked`` chooses the entry's valid bit or R-mask."""
    inv = Inventory()
    w, rb, wb, e, b = p.warp_size, p.reg_bits, p.warp_bits, p.entries, p.writebacks
    held = w if p.masked else 1  # an entry's valid bit or R-mask
    stored = p.warps * e  # entries in the table
    ports = 1 + p.lookups  # read ports: the reservation's and each lookup's
    inv.add("entries", ff=stored * (rb + held))
    # the incoming reservation (the registered issue port): valid, warp, rd (masked: mask);
    # the write-backs clear the issue as it enters and the incoming entry as it moves into
    # the table (two clearings)
    inv.add("incoming", ff=1 + wb + rb + (w if p.masked else 0))
    inv.add("incoming", eq=2 * b * (wb + rb), gate=2 * b * 3 + rb + 1)
    if p.masked:
        inv.add("incoming", mux=2 * b * w, gate=2 * (reduce(b) * w + w) + reduce(w))
    # a read port: its warp's set, a warps-way selection of the stored entries (no bypass:
    # the write-backs act at the clock edge); masked, an entry is valid while its R-mask has
    # a lane
    inv.add("read", mux=ports * pick(p.warps, e * seen_bits(p)))
    if p.masked:
        inv.add("read", gate=ports * e * reduce(w))
    # write-back k hits a stored entry when valid, of its warp (its warp id decoded) and
    # register; the hitting write-backs clear the entry at the clock edge
    inv.add(
        "writeback",
        eq=b * stored * rb,
        gate=b * (stored + p.warps + decode(wb, p.warps)),
    )
    if p.masked:  # the OR of the hitting write-backs' masks leaves the R-mask
        inv.add("writeback", mux=stored * b * w, gate=stored * (reduce(b) * w + w))
    else:  # any hit clears the valid bit
        inv.add("writeback", gate=stored * (reduce(b) + 1))
    # the next state: the issuing warp decoded; the entry taking a reservation loads rd
    inv.add("update", gate=decode(wb, p.warps) + stored)
    if p.masked:  # takes the mask, or ORs it in when merging
        inv.add("update", mux=stored * 2 * w, gate=stored * (w + 1))
    else:
        inv.add("update", gate=stored)
    # reservation: the first free entry of the set (masked: unless one holds rd already)
    inv.add("reserve", gate=2 * reduce(e) + e + 2)
    if p.masked:
        inv.add("reserve", eq=e * rb, gate=2 * e + reduce(e))
    # a lookup: three operand ids against every entry of the set, each id decoded into the
    # R-bit dependency mask, the hits ORed (``hazard``); the destination's presence and a
    # free entry give ``full``
    per_lookup = {
        "eq": OPERANDS * e * rb,
        "gate": reduce(w)
        + OPERANDS * (e + reduce(e) + 1 + p.regs + decode(rb, p.regs))
        + reduce(OPERANDS) * p.regs
        + reduce(OPERANDS)
        + reduce(e)
        + 3,
    }
    if p.masked:  # each entry's R-mask shares a lane with the instruction's mask
        per_lookup["gate"] += e * (w + reduce(w)) + OPERANDS * e
    # the incoming entry (its warp's): its register against the three operands, shared lanes
    # (masked); at least two free entries when it takes one
    per_lookup["eq"] += OPERANDS * rb + wb
    per_lookup["gate"] += 2 * OPERANDS + e * (e - 1) // 2 + reduce(e * (e - 1) // 2) + 3
    per_lookup["mux"] = 1
    if p.masked:
        per_lookup["gate"] += w + reduce(w) + OPERANDS
    inv.add("lookup", **{k: p.lookups * n for k, n in per_lookup.items()})
    return inv
