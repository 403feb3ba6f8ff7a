"""External simulators: Spike (the `spike` package's binary) and Chipyard
Verilator binaries, the device tree baco hands to Spike, and the messages
when a library or binary is missing."""
import os
import struct
import textwrap

import pytest

from baco.codegen.toolchain import compile_and_link
from baco.sim import cli, external


@pytest.fixture(scope="module")
def plain_elf(tmp_path_factory):
    d = tmp_path_factory.mktemp("ext")
    src = d / "plain.c"
    src.write_text(textwrap.dedent(r"""
        #include <stdio.h>
        int main(void) {
          long s = 0;
          for (int i = 1; i <= 100; i++) s += i;
          printf("sum=%ld\n", s);
          return s == 5050 ? 42 : 1;
        }"""))
    return compile_and_link([src], d / "plain.elf")


def _fdt_nodes(blob):
    """Node names and properties of an FDT, parsed back (structure block walk)."""
    magic, total, off_struct, off_strings = struct.unpack_from(">4I", blob)
    assert magic == 0xD00DFEED and total == len(blob)
    pos, nodes, path = off_struct, {}, []
    while True:
        (token,) = struct.unpack_from(">I", blob, pos)
        pos += 4
        if token == 1:
            end = blob.index(b"\0", pos)
            path.append(blob[pos:end].decode())
            nodes["/".join(path) or "/"] = {}
            pos = (end + 4) & ~3
        elif token == 3:
            length, nameoff = struct.unpack_from(">II", blob, pos)
            name = blob[off_strings + nameoff:blob.index(b"\0", off_strings + nameoff)].decode()
            nodes["/".join(path) or "/"][name] = blob[pos + 8:pos + 8 + length]
            pos = (pos + 8 + length + 3) & ~3
        elif token == 2:
            path.pop()
        elif token == 9:
            return nodes
        else:
            raise AssertionError(f"bad token {token}")


def test_device_tree_structure():
    nodes = _fdt_nodes(external.spike_device_tree(ram_size=0x10000000))
    assert nodes["/cpus/cpu@0"]["riscv,isa"] == external.SPIKE_ISA.encode() + b"\0"
    assert struct.unpack(">4I", nodes["/memory@80000000"]["reg"]) == (0, 0x80000000, 0, 0x10000000)
    assert nodes["/htif"]["compatible"] == b"ucb,htif0\0"
    assert nodes["/cpus/cpu@0/interrupt-controller"]["interrupt-controller"] == b""


def test_plain_program_on_spike(plain_elf, capfd):
    code = external.run_spike(plain_elf, gemmini=False, timeout_s=60)
    out = capfd.readouterr().out
    assert code == 42
    assert "sum=5050" in out


def test_spike_through_cli(plain_elf, capfd):
    assert cli.main([str(plain_elf), "--target", "spike", "--no-gemmini"]) == 42
    assert "sum=5050" in capfd.readouterr().out


def test_spike_without_extlib_says_what_to_set(plain_elf, monkeypatch, capsys):
    monkeypatch.delenv(external.SPIKE_EXTLIB_ENV, raising=False)
    assert cli.main([str(plain_elf), "--target", "spike"]) == cli.RUN_FAILED
    err = capsys.readouterr().err
    assert "--extlib" in err and external.SPIKE_EXTLIB_ENV in err and "libgemmini" in err
    assert "Chipyard" in err


def test_spike_extlib_must_exist(plain_elf, tmp_path, capsys):
    missing = tmp_path / "libgemmini.so"
    assert cli.main([str(plain_elf), "--target", "spike", "--extlib", str(missing)]) == cli.RUN_FAILED
    assert "does not exist" in capsys.readouterr().err


def test_spike_command_line_with_extlib(plain_elf, tmp_path, monkeypatch):
    lib = tmp_path / "libgemmini.so"
    lib.write_bytes(b"")
    monkeypatch.setenv(external.SPIKE_EXTLIB_ENV, str(lib))
    cmd = external.spike_command(plain_elf, extlib=None)
    assert "--extension=gemmini" in cmd and f"--extlib={lib.resolve()}" in cmd
    # Spike registers the extension when it loads the library, and looks --extension up
    # as it parses it: the library must come first.
    assert cmd.index(f"--extlib={lib.resolve()}") < cmd.index("--extension=gemmini")
    assert cmd[-1] == str(plain_elf)


def test_verilator_missing_binary(plain_elf, monkeypatch, capsys):
    monkeypatch.delenv(external.VERILATOR_ENV, raising=False)
    assert cli.main([str(plain_elf), "--target", "verilator"]) == cli.RUN_FAILED
    err = capsys.readouterr().err
    assert "--verilator" in err and external.VERILATOR_ENV in err


def test_verilator_runs_given_binary(plain_elf, tmp_path, monkeypatch, capfd):
    # A stand-in simulator that prints its arguments and exits like a sim
    # whose program returned 3.
    sim = tmp_path / "simulator-chipyard-GemminiRocketConfig"
    sim.write_text("#!/bin/sh\necho \"args: $*\"\nexit 3\n")
    sim.chmod(0o755)
    monkeypatch.setenv(external.VERILATOR_ENV, str(sim))
    assert cli.main([str(plain_elf), "--target", "verilator"]) == 3
    out = capfd.readouterr().out
    assert f"args: +permissive +permissive-off {plain_elf}" in out
    assert os.access(sim, os.X_OK)


def test_simulator_killed_by_signal_is_a_run_failure(plain_elf, tmp_path, monkeypatch, capsys):
    # An extension library's failed assertion aborts Spike: a signal, not the program's exit code.
    sim = tmp_path / "simulator-aborts"
    sim.write_text("#!/bin/sh\nkill -ABRT $$\n")
    sim.chmod(0o755)
    monkeypatch.setenv(external.VERILATOR_ENV, str(sim))
    assert cli.main([str(plain_elf), "--target", "verilator"]) == cli.RUN_FAILED
    assert "killed by signal 6" in capsys.readouterr().err
