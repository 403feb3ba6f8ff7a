"""A functional Gemmini model that records the commands the CPU issues (not what its hardware loops
expand to): the tests' way of counting a program's LOOP_WSs and explicit moves."""
from baco.gemmini.isa import decode
from baco.sim.timing import CommandStream


class IssuedCommands(CommandStream):
    """CommandStream that appends each issued command's name to `names`."""

    def __init__(self, names: list, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.names, self.depth = names, 0

    def execute(self, funct, rs1, rs2, pc=None):
        if self.depth == 0:
            self.names.append(decode(funct, rs1, rs2)[0].name)
        self.depth += 1
        try:
            return super().execute(funct, rs1, rs2, pc)
        finally:
            self.depth -= 1
