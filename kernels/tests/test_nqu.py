"""The nqu kernel (seed 001 Table 5.2 NQU, partial boards completed by bitmask backtracking):
the golden SM under three policies against the oracle, the oracle against a set-based
recursive solver of every partial board, the known totals of N-Queens, and the benchmark's
shape: a warp's threads find different numbers of solutions after different amounts of work."""

from __future__ import annotations

import pytest

from reconverge.golden.testing.benchmarks import cached_reference, run_policies
from reconverge.kernels import nqu

SPEC = nqu.SPEC
SOLUTIONS = {6: 4, 7: 40, 8: 92, 9: 352}  # OEIS A000170


def complete(n: int, queens: list[int]) -> tuple[int, int]:
    """Solutions and queens placed completing ``queens`` (one column per row so far)."""
    solutions = placed = 0
    row = len(queens)
    for c in range(n):
        if c in queens or any(abs(c - q) == row - r for r, q in enumerate(queens)):
            continue
        placed += 1
        if row == n - 1:
            solutions += 1
        else:
            more, deeper = complete(n, [*queens, c])
            solutions, placed = solutions + more, placed + deeper
    return solutions, placed


def masks_board(n: int, k: int, cols: int, left: int, right: int) -> list[int] | None:
    """The partial board (columns of rows 0..k-1) whose masks these are: the one of the
    host's boards that gives them (None for a padding thread)."""
    for board in nqu.partial_boards(n, k):
        if nqu.board_masks(board) == (cols, left, right):
            return list(board)
    return None


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (6, 3), (8, 1)])
def test_oracle_is_the_recursive_solver(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    n, k = case.args["n"], case.args["k"]
    out = cached_reference(SPEC, size, seed)
    expected_count, expected_nodes = [], []
    for cols, left, right in case.args["masks"].reshape(-1, 3).tolist():
        board = masks_board(n, k, cols, left, right)
        solutions, placed = complete(n, board) if board is not None else (0, 0)
        expected_count.append(solutions)
        expected_nodes.append(placed)
    assert out["count"].tolist() == expected_count
    assert out["nodes"].tolist() == expected_nodes
    assert sum(expected_count) == SOLUTIONS[n]


def test_golden_sm_matches_the_oracle_under_three_policies() -> None:
    run_policies(SPEC)


def test_threads_of_a_warp_search_unequally() -> None:
    """NQU's shape: within one warp some boards have no completion and others several, and the
    work (queens placed) differs by more than 2x between its threads that place any."""
    out = cached_reference(SPEC, 8, 1)
    count, nodes = out["count"][:32], out["nodes"][:32]
    assert (count == 0).any() and count.max() >= 2
    assert nodes.max() > 2 * nodes[nodes > 0].min()
