"""Reads a bash launcher: its launches, variables, `#SBATCH` lines and value flows, with exact origins.

The script is parsed with tree-sitter-bash and then interpreted statically, statement by statement,
over an environment of variable bindings. Nothing is executed: a value that needs running something
(`$(nvidia-smi ...)`, `$RANDOM`, a variable from the caller's environment) becomes `Unknown` with a
reason. Every value keeps the byte span it was written at, character by character, so that an unquoted
`$DISTRIBUTED_ARGS` can be split into words that each point inside the assignment's string.

The reader is one interpreter split by concern: statements and branch merges, assignments, commands,
words, parameter and arithmetic expansion, launches, inner shells, broken continuations and `#SBATCH`.
"""

from trainlint.readers.shell.reader import read_shell

__all__ = ["read_shell"]
