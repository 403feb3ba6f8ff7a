"""The fuzz corpus (tests/fuzz_corpus.py): every case gives its expected outcome —
a CompilationError at its line:col, a TypeError/ValueError naming the argument, a
located run-time error, or a result equal to the numpy reference and to the
interpreter's. A few result cases also run on the ISS (all of them with -m slow)."""
import numpy as np
import pytest

from baco.errors import CompilationError
from tests import fuzz_corpus as fc

CASES = fc.build(fc.corpus())


def check(case, target="sim"):
    if case.expect == "result":
        got = case.run(case.kernel, target)
        expected = case.reference()
        for name, array in expected.items():
            np.testing.assert_array_equal(got[name], array, err_msg=f"{case.name}: {name} on {target}")
        return got
    with pytest.raises(case.exc) as e:
        case.run(case.kernel, target)
    err = e.value
    assert case.match in str(err), f"{case.name}: {err}"
    assert "Traceback" not in str(err)
    if case.expect == "compile":
        assert isinstance(err, CompilationError)
        assert (err.filename, err.line, err.col) == (str(fc.case_path[0]), *case.where), str(err)
    if case.located:
        assert (err.line, err.col) == case.where, str(err)


def check_with_interpreter(case, monkeypatch):
    monkeypatch.delenv("BACO_INTERPRET", raising=False)
    check(case)
    if case.expect in ("result", "runtime") or case.category == "capacity":
        monkeypatch.setenv("BACO_INTERPRET", "1")     # the interpreter: same result, same error
        check(case)


@pytest.mark.parametrize("case", [c for c in CASES if not c.slow], ids=lambda c: c.name)
def test_corpus_case(case, monkeypatch):
    check_with_interpreter(case, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c.slow], ids=lambda c: c.name)
def test_corpus_case_slow(case, monkeypatch):
    check_with_interpreter(case, monkeypatch)


@pytest.mark.parametrize("case", [c for c in CASES if c.expect in ("result", "runtime") and c.on_iss],
                         ids=lambda c: c.name)
def test_corpus_case_on_iss(case):
    check(case, "iss")


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in CASES if c.expect in ("result", "runtime") and not c.on_iss],
                         ids=lambda c: c.name)
def test_corpus_case_on_iss_slow(case):
    check(case, "iss")


def test_corpus_size_and_coverage():
    counts = fc.counts(CASES)
    assert len(CASES) >= 150
    assert set(counts) == {"compile", "launch", "runtime", "result"}
    used = " ".join(c.source for c in CASES)
    import baco.language as bl
    for builtin in bl.__all__:
        if builtin not in ("int8", "int32", "float32", "constexpr"):
            assert f"bl.{builtin}(" in used, builtin


def test_fuzz_report_smoke(capsys):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "fuzz_report.py"
    spec = importlib.util.spec_from_file_location("fuzz_report", path)
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    assert report.main(["--smoke"]) == 0
    assert "expected outcome: 12/12 cases; internal tracebacks: 0; wrong results: 0" in capsys.readouterr().out
