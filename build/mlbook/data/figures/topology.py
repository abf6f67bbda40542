"""Figures of cluster network topologies: a two-tier fat tree and a rail-optimised fabric, drawn from their rules."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import COLORS, INK, box, canvas


def fat_tree_links(leaves: int, spines: int) -> list[tuple[int, int]]:
    """(leaf, spine) uplinks of a two-tier fat tree: every leaf connects to every spine once."""
    return [(leaf, spine) for leaf in range(leaves) for spine in range(spines)]


def rail_links(nodes: int, nics: int) -> list[tuple[int, int, int]]:
    """(node, nic, rail) cables of a rail-optimised fabric: NIC i of every node goes to rail switch i."""
    return [(node, nic, nic) for node in range(nodes) for nic in range(nics)]


def _fat_tree(ax, data_dir: Path) -> None:
    leaves, spines, down = 8, 4, 4
    canvas(ax, 16, 6)
    spine_x = [2.5 + i * 3.3 for i in range(spines)]
    leaf_x = [0.4 + i * 1.95 for i in range(leaves)]
    for leaf, spine in fat_tree_links(leaves, spines):
        ax.plot(
            [leaf_x[leaf] + 0.7, spine_x[spine] + 0.7],
            [2.6, 4.6],
            color=COLORS[spine],
            lw=0.7,
            ls=("-", "--", "-.", ":")[spine],
        )
    for i, x in enumerate(spine_x):
        box(ax, x, 4.6, 1.4, 0.7, f"spine {i}", 1)
    for i, x in enumerate(leaf_x):
        box(ax, x, 1.9, 1.4, 0.7, f"leaf {i}", 0)
        for k in range(down):
            ex = x + 0.1 + k * 0.4
            ax.plot([x + 0.7, ex], [1.9, 1.1], color=INK, lw=0.6)
            ax.plot([ex], [1.0], marker="s", color=INK, ms=3)
    ax.text(
        8,
        0.3,
        f"{leaves} leaves x {down} endpoints; each leaf: {down} down, {spines} up (1:1, non-blocking)",
        ha="center",
        fontsize=7,
    )


def _rail(ax, data_dir: Path) -> None:
    nodes, nics = 4, 8
    canvas(ax, 16, 6)
    rail_x = [0.5 + i * 1.95 for i in range(nics)]
    node_x = [0.5 + i * 3.9 for i in range(nodes)]
    for node, nic, rail in rail_links(nodes, nics):
        nx = node_x[node] + 0.2 + nic * 0.42
        ax.plot(
            [nx, rail_x[rail] + 0.7], [1.7, 3.4], color=COLORS[rail % 4], lw=0.6, ls=("-", "--", "-.", ":")[rail % 4]
        )
    for i, x in enumerate(rail_x):
        box(ax, x, 3.4, 1.4, 0.7, f"rail {i}", 1, fontsize=6.5)
        ax.plot([x + 0.7, 8], [4.1, 5.1], color=INK, lw=0.5, ls=":")
    ax.text(8, 5.3, "spine (cross-rail traffic only)", ha="center", fontsize=7)
    for i, x in enumerate(node_x):
        box(ax, x, 0.9, 3.6, 0.8, f"node {i}: 8 GPUs + 8 NICs", 0, fontsize=6.5)
    ax.text(
        8, 0.3, "NIC i of every node → rail switch i: same-index GPUs are one switch hop apart", ha="center", fontsize=7
    )


FIGURES = (
    Figure(
        "fat-tree",
        _fat_tree,
        "Two-tier fat tree: eight leaf switches with four endpoints each, every leaf linked to each of four spines",
        "A two-tier fat tree (folded Clos) drawn small: every leaf has one uplink to each of the 4 spines and as "
        "many uplinks as endpoints, so it is non-blocking; endpoints on different leaves are three switch hops "
        "apart over 4 equal-cost paths. Drawn from the construction rule (topology.py: fat_tree_links).",
        kind="diagram",
    ),
    Figure(
        "rail-optimised",
        _rail,
        "Rail-optimised fabric: four eight-GPU nodes whose NIC i each connect to rail switch i, spines above",
        "A rail-optimised fabric drawn small: NIC i of each of 4 eight-GPU nodes connects to rail leaf i, so "
        "traffic between GPUs of the same index stays on one rail switch; only cross-rail traffic climbs to the "
        "spine. Drawn from the wiring rule (topology.py: rail_links).",
        kind="diagram",
    ),
)
