"""One description of a LOOP_WS program's CPU terms (schedule.loop_ws_program_terms): the loops the
walk prices (gemm_loop_ws_loops), the launch's term counts the fit uses (loop_ws_launch_terms) and the
tuner's closed form (loop_ws_instructions) all derive from it, so they agree and a change to it
changes all three. The same for LoopConv's terms (loop_conv_program_terms)."""
import itertools
from types import SimpleNamespace

import pytest
import torch

from baco.gemmini import schedule
from baco.gemmini.config import GemminiConfig
from baco.gemmini.schedule import (CONV_EXPLICIT_INSTRUCTIONS, LOOP_CONV_INSTRUCTIONS, LOOP_WS_INSTRUCTIONS,
                                   GemmSchedule, _loop_field_sum,
                                   gemm_loop_ws_loops, grid_axes, last_step_form, loop_conv_instructions, loop_ws_instructions,
                                   loop_ws_launch_terms, one_program, one_row, ragged_k_loop)
from baco.gemmini.timing_constants import DEFAULT_CONSTANTS
from baco.tuner.kernel_model import conv_cpu_cycles

MS, NS, KS = (1, 17, 65), (1, 33), (1, 17, 33, 64, 65)
FLAGS = list(itertools.product((False, True), (False, True)))          # b_transposed, b_padded


def launches():
    """Ragged GEMMs at DIM 2-32 in blocks that make every last-step form, one-step and multi-step
    programs, resident and moved Bs."""
    for dim in (2, 4, 16, 32):
        cfg = GemminiConfig(dim=dim)
        for (M, N, K), (bm, bn, bk) in itertools.product(itertools.product(MS, NS, KS),
                                                          ((dim, dim, dim), (2 * dim, dim, 3 * dim),
                                                           (dim, 2 * dim, 64))):
            yield cfg, M, N, K, GemmSchedule(bm, bn, bk, "WS", True)


def form(M, N, K, s, cfg, b_transposed, b_padded) -> str:
    """The launch's last-step form, as its loops take it."""
    return last_step_form(K, s, cfg, b_transposed, b_padded, one_program(M, N, s), one_row(M, N, K, s))


def charged(terms: dict) -> float:
    return sum(n * LOOP_WS_INSTRUCTIONS[name] for name, n in terms.items())


def test_the_loops_charge_what_the_launch_terms_count():
    forms = set()
    for cfg, M, N, K, s in launches():
        for b_transposed, b_padded in FLAGS:
            forms.add(form(M, N, K, s, cfg, b_transposed, b_padded))
            terms = loop_ws_launch_terms(M, N, K, s, cfg, b_transposed, b_padded)
            loops = gemm_loop_ws_loops(M, N, K, s, cfg, b_transposed=b_transposed, b_padded=b_padded)
            assert _loop_field_sum(loops, "cpu") == pytest.approx(charged(terms), rel=1e-12), (M, N, K, s)
            assert terms["program"] == -(-M // s.block_m) * -(-N // s.block_n)
            assert terms["launch"] == 1
    assert forms == {"whole", "padded", "explicit_b", "split", "split_after"}


@pytest.mark.parametrize("dim,M,N,K,blocks,term", [
    (16, 16, 16, 41, (16, 16, 48), "head_last"),        # one step of 3 blocks: the whole blocks first
    (16, 1, 1, 91, (16, 16, 96), "head_last"),
    (16, 16, 16, 20, (16, 16, 32), "head"),             # one step of 2 blocks: the head first
    (8, 100, 20, 30, (16, 16, 16), "head"),             # a later step's split: the head first
    (16, 16, 64, 40, (16, 16, 48), "split_after"),      # a one-row grid of several programs
    (32, 17, 200, 33, (32, 64, 64), "split_after")])
def test_a_split_step_is_charged_its_forms_term(dim, M, N, K, blocks, term):
    """A split step's second LOOP_WS is charged one term a program, the one its order names
    (schedule.split_term: head first, head last, a one-row grid's split_after)."""
    cfg, s = GemminiConfig(dim=dim), GemmSchedule(*blocks, "WS", True)
    terms = loop_ws_launch_terms(M, N, K, s, cfg)
    splits = {name: terms[name] for name in ("head", "head_last", "split_after")}
    assert splits == {name: terms["program"] * (name == term) for name in splits}, splits


def test_the_closed_form_is_the_launch_terms_of_whole_steps():
    for cfg, M, N, K, s in launches():
        for b_transposed, b_padded in FLAGS:
            if form(M, N, K, s, cfg, b_transposed, b_padded) not in ("whole", "padded"):
                continue
            terms = loop_ws_launch_terms(M, N, K, s, cfg, b_transposed, b_padded)
            programs, steps = terms["program"], -(-K // s.block_k)
            ragged = ragged_k_loop(K, s.block_k)
            rows, cols = grid_axes(M, N, s.block_m, s.block_n)
            assert loop_ws_instructions(programs, steps, N, K, ragged, rows, cols) == \
                pytest.approx(charged(terms), rel=1e-12)
            t = {name: torch.tensor([float(v)], dtype=torch.float64)
                 for name, v in dict(programs=programs, steps=steps, M=M, N=N, K=K, bm=s.block_m, bn=s.block_n,
                                     bk=s.block_k).items()}
            as_tensors = loop_ws_instructions(t["programs"], t["steps"], t["N"], t["K"],
                                              ragged_k_loop(t["K"], t["bk"]), *grid_axes(t["M"], t["N"], t["bm"], t["bn"]))
            assert float(as_tensors[0]) == pytest.approx(charged(terms), rel=1e-6)


def test_a_change_to_the_description_changes_every_user(monkeypatch):
    """A term added to the program's description (here 'mvin' once more a program) reaches the
    loops, the launch's counts and the closed form alike."""
    cfg, s = GemminiConfig(dim=16), GemmSchedule(32, 16, 64, "WS", True)
    M, N, K = 65, 33, 128
    before = (_loop_field_sum(gemm_loop_ws_loops(M, N, K, s, cfg), "cpu"),
              loop_ws_launch_terms(M, N, K, s, cfg), loop_ws_instructions(6, 2, N, K))
    described = schedule.loop_ws_program_terms

    def with_one_more_mvin(*args, **kwargs):
        terms = described(*args, **kwargs)
        return {**terms, "program": {**terms["program"], "mvin": 1}}

    monkeypatch.setattr(schedule, "loop_ws_program_terms", with_one_more_mvin)
    cpu = _loop_field_sum(gemm_loop_ws_loops(M, N, K, s, cfg), "cpu")
    terms = loop_ws_launch_terms(M, N, K, s, cfg)
    programs = before[1]["program"]
    assert cpu == pytest.approx(before[0] + programs * LOOP_WS_INSTRUCTIONS["mvin"])
    assert terms == {**before[1], "mvin": before[1]["mvin"] + programs}
    assert loop_ws_instructions(6, 2, N, K) == pytest.approx(before[2] + 6 * LOOP_WS_INSTRUCTIONS["mvin"])


def test_loop_conv_terms_are_the_tuners():
    """The tuner's CPU cycles of LOOP_CONV_WS programs (conv_cpu_cycles) are loop_conv_instructions',
    conv and depthwise programs of one or more channel blocks, strided or not, with a bias or not, of
    one program along the output rows or several (P > the program's rows), programs of one row or
    several (a layer of 14 rows in programs of one: its rows' terms without the program's; a further
    channel block of a program along several, block_rows); a program of no LOOP_CONV_WS is the explicit
    stream's (a strided layer's: its K steps priced again, CONV_EXPLICIT_INSTRUCTIONS' strided_step)."""
    programs = torch.tensor([3.0, 3.0, 7.0, 7.0, 5.0], dtype=torch.float64)
    loops = torch.tensor([1.0, 4.0, 1.0, 2.0, 0.0], dtype=torch.float64)
    layers = SimpleNamespace(depthwise=torch.tensor([False, False, True, True, False]),
                             Hstride=torch.tensor([1.0, 2.0, 1.0, 2.0, 2.0], dtype=torch.float64),
                             bias=torch.tensor([False, True, True, False, False]),
                             P=torch.tensor([1.0, 7.0, 14.0, 1.0, 7.0], dtype=torch.float64))
    terms = {"programs": programs, "k_steps": torch.full((5,), 9.0, dtype=torch.float64),
             "commands": torch.full((5,), 400.0, dtype=torch.float64)}
    cycles = conv_cpu_cycles(layers, terms, torch.tensor([1.0, 2.0, 1.0, 1.0, 2.0], dtype=torch.float64), loops)
    c, e = LOOP_CONV_INSTRUCTIONS, CONV_EXPLICIT_INSTRUCTIONS
    expected = [3 * c["conv"],
                3 * (c["conv"] + 3 * c["block"] + c["strided"] + c["bias"] + c["output_rows"] + c["program_rows"]
                     + 3 * c["block_rows"]),
                7 * (c["depthwise"] + c["bias"] + c["output_rows"]), 7 * (c["depthwise"] + c["block"] + c["strided"]),
                5 * 9 * (e["step"] + e["strided_step"] + 2 * e["slice"]) + 400 * e["command"]]
    assert cycles.tolist() == pytest.approx([v * DEFAULT_CONSTANTS.cpu_cycles_per_instruction for v in expected])
    assert loop_conv_instructions(3, 4, strided=True, bias=True) == pytest.approx(expected[1])
    assert loop_conv_instructions(7, 2, depthwise=True, strided=True, output_rows=False,
                                  program_rows=False) == pytest.approx(expected[3])
    assert loop_conv_instructions(7, 1, depthwise=True, bias=True, program_rows=False) == pytest.approx(expected[2])


@pytest.mark.parametrize("dim, M, N, K, blocks, mvins, column_mvins", [
    (16, 64, 40, 72, (48, 16, 80), 15, 15),         # 3 columns' first programs, 5 k blocks each
    (16, 96, 40, 72, (48, 16, 80), 15, 15),         # the second row computes on the resident B
    (16, 49, 97, 33, (48, 16, 48), 21, 21),         # 7 columns (the last 1 wide), 3 k blocks each
    (16, 1086, 1, 572, (64, 16, 576), 36, 0),       # one column: its mvin loop folds
    (16, 32, 16, 41, (16, 16, 48), 3, 0)])         # a column of two programs: the first moves B
def test_an_explicit_bs_mvins_cost_more_in_a_grid_of_several_columns(dim, M, N, K, blocks, mvins, column_mvins):
    """Each mvin of an explicitly moved B is a "mvin", and a "column_mvin" again where the grid has
    more than one column of programs (the mvin loop runs on the program's column)."""
    cfg = GemminiConfig(dim=dim)
    s = GemmSchedule(*blocks, "WS", True)
    assert form(M, N, K, s, cfg, False, False) == "explicit_b"
    terms = loop_ws_launch_terms(M, N, K, s, cfg)
    assert (terms["mvin"], terms["column_mvin"]) == (mvins, column_mvins)
    assert terms["explicit_b"] == -(-N // s.block_n)
