"""Gemmini's own test suite on `baco sim`: the 54 bareMetalC programs of gemmini-rocc-tests
(180c46848eca, built for the default DIM 16 configuration: ../shared/reference/gemmini-rocc-tests/bin,
see its README) each exit 0 on the plain ISS + functional model, no option given. gemmini_counter
reads Gemmini's performance counters, so the cycle model attaches itself (it failed with "Counter
Value failed to increase" without --timing). A fast subset runs by default, all 54 with -m slow.
Skipped, with the reason, when the shared reference folder is absent."""
import pytest

from baco.sim import cli
from tests.shared import shared_dir

BIN = ("gemmini-rocc-tests", "bin")
SUITE_SIZE = 54
# quick ones (a second or two each) that cover moves, both dataflows, scaling, transposes, hazards,
# pooling, LOOP_WS and the counters
FAST = ("gemmini_counter", "template", "aligned", "mvin_mvout_acc", "matmul_ws", "matmul_os", "mvin_scale",
        "transpose", "raw_hazard", "conv_first_layer", "tiled_matmul_ws", "resadd")


def suite() -> list[str]:
    """The bareMetalC programs' names (the mlp* programs of mlps/ are not part of it)."""
    base = shared_dir()
    folder = base / "reference" / BIN[0] / BIN[1] if base else None
    if folder is None or not folder.is_dir():
        return []
    return sorted(p.name[:-len("-baremetal")] for p in folder.iterdir()
                  if p.name.endswith("-baremetal") and not p.name.startswith("mlp"))


NO_SHARED = pytest.param(None, marks=pytest.mark.skip(reason="no ../shared/reference/gemmini-rocc-tests/bin "
                                                             "(set BACO_SHARED to the shared folder)"))


def run_program(name, capsys):
    from tests.shared import reference
    elf = reference(*BIN, f"{name}-baremetal")
    rc = cli.main([str(elf)])
    out, err = capsys.readouterr()
    assert rc == 0, f"{name}: exit {rc}\n{out[-2000:]}\n{err[-2000:]}"
    return out, err


@pytest.mark.parametrize("name", [n for n in FAST if n in suite()] or [NO_SHARED])
def test_gemmini_program_on_baco_sim(name, capsys):
    out, err = run_program(name, capsys)
    if name == "gemmini_counter":       # its counters counted: the cycle model attached itself
        assert "failed" not in out.lower() and "cycle model" in err


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in suite() if n not in FAST] or [NO_SHARED])
def test_every_gemmini_program_on_baco_sim(name, capsys):
    run_program(name, capsys)


def test_the_suite_is_whole():
    names = suite()
    if not names:
        pytest.skip("no ../shared/reference/gemmini-rocc-tests/bin (set BACO_SHARED to the shared folder)")
    assert len(names) == SUITE_SIZE and set(FAST) <= set(names)
