"""``mnemosyne completion bash|zsh|fish``: a shell completion script generated from the
argument parser by shtab, so it completes every command and flag the parser has.

``--dir`` completes with the vault's own dirs: the script asks ``mnemosyne completion
--list-dirs [--vault PATH]`` (hidden from --help and from the scripts), which prints the
vault's top-level dirs, one a line, quickly and silently (no output at all on an error).

Only ``mnemosyne completion`` imports this module (app.build_parser registers it only for
the whole tree, never for a wiki command's call), and only script generation imports
shtab: a find call pays nothing for completion.
"""

from __future__ import annotations

from mnemosyne_cli.options import VAULT, Arguments, Command, Option, flag, parse_words
from mnemosyne_contract import exit_status

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from mnemosyne_cli.environment import Environment
    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend

SHELLS = ("bash", "zsh", "fish")

#: The shell function, one per shell, that completes --dir with the vault's dirs. Each
#: passes on the --vault of the command line being completed, with a leading ~ expanded.
#: Named with "_dirs" so that shtab's bash script quotes what it inserts as file names.
DIRS_FUNCTION = "_mnemosyne_vault_dirs"
#: Where each function names --vault: the spelling the declaration gives it (options.VAULT).
VAULT_PLACEHOLDER = "@VAULT@"
PREAMBLES = {
    "bash": r"""
# --dir: the vault's own dirs, from `mnemosyne completion --list-dirs [@VAULT@ PATH]`.
_mnemosyne_vault_dirs() {
  local i vault=() IFS=$'\n'
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      @VAULT@)
        # COMP_WORDBREAKS splits @VAULT@=PATH into three words: @VAULT@, =, PATH.
        if [[ "${COMP_WORDS[i+1]}" == "=" ]]; then ((i++)); fi
        if ((i + 1 < COMP_CWORD)); then vault=(@VAULT@ "${COMP_WORDS[i+1]/#\~/$HOME}"); fi ;;
    esac
  done
  compgen -W "$(command mnemosyne completion --list-dirs "${vault[@]}" 2>/dev/null)" -- "$1"
}
""",
    "zsh": r"""
# --dir: the vault's own dirs, from `mnemosyne completion --list-dirs [@VAULT@ PATH]`.
_mnemosyne_vault_dirs() {
  local -a dirs vault
  local i=${words[(I)@VAULT@]}
  if (( i && i < CURRENT - 1 )); then
    vault=(@VAULT@ "${words[i+1]/#\~/$HOME}")
  elif i=${words[(I)@VAULT@=*]}; (( i && i < CURRENT )); then
    vault=(@VAULT@ "${${words[i]#@VAULT@=}/#\~/$HOME}")
  fi
  dirs=(${(f)"$(command mnemosyne completion --list-dirs $vault 2>/dev/null)"})
  compadd -a dirs
}
""",
    "fish": r"""
# --dir: the vault's own dirs, from `mnemosyne completion --list-dirs [@VAULT@ PATH]`.
function _mnemosyne_vault_dirs
  set -l tokens (commandline -opc)
  set -l vault
  for i in (seq (count $tokens))
    switch $tokens[$i]
      case @VAULT@
        set -l next (math $i + 1)
        if test $next -le (count $tokens)
          set vault @VAULT@ (string replace -r '^~' $HOME -- $tokens[$next])
        end
      case '@VAULT@=*'
        set vault @VAULT@ (string replace -r '^@VAULT@=~?' '' -- $tokens[$i])
        if string match -q -- '@VAULT@=~*' $tokens[$i]
          set vault[2] $HOME$vault[2]
        end
    end
  end
  command mnemosyne completion --list-dirs $vault 2>/dev/null
end
""",
}


class CompletionArguments(Arguments):
    """``mnemosyne completion``'s arguments. --list-dirs and its --vault are the scripts'
    helper: hidden from --help and from the scripts themselves."""

    shell: Option[str | None] = Option((), "bash, zsh or fish", None, metavar="SHELL", nargs="?", choices=SHELLS)
    list_dirs = flag("--list-dirs", help="print the vault's dirs, for the scripts' --dir", hidden=True)
    vault: Option[str | None] = Option(
        ("--vault",), "the vault whose dirs --list-dirs prints", None, metavar="PATH", hidden=True
    )


COMMAND = Command(
    "completion",
    CompletionArguments,
    summary="print a shell completion script (bash, zsh or fish)",
    description="Print a completion script for SHELL on stdout: it completes commands, "
    "flags, constellations, file and dir arguments, and --dir with the dirs of the vault "
    "(the --vault on the line being completed, else the usual default). Install lines "
    "for each shell are in docs/commands.md.",
    examples=[
        "mnemosyne completion bash > ~/.local/share/bash-completion/completions/mnemosyne",
        "mnemosyne completion zsh > ~/.zfunc/_mnemosyne   # with fpath+=(~/.zfunc) before compinit",
        "mnemosyne completion fish > ~/.config/fish/completions/mnemosyne.fish",
    ],
    exit_codes=[
        (exit_status.OK, "the script is on stdout"),
        (exit_status.USAGE, "usage error: no SHELL, or one other than bash, zsh, fish"),
        (exit_status.WRITE_FAILED, "stdout could not take the script (closed, disk full)"),
    ],
)


def list_dirs_call(words: Sequence[str]) -> CompletionArguments | None:
    """The arguments of a ``completion --list-dirs [--vault PATH]`` call as the scripts
    make it, or None for any other call (then argparse parses it). The console script runs
    such a call without argparse: it is made on every Tab."""
    if words[:1] != ["completion"]:
        return None
    arguments = parse_words(CompletionArguments, words[1:])
    return arguments if arguments is not None and arguments.list_dirs else None


def run(args: CompletionArguments, console: Console, backend: Backend | None) -> int:
    if args.list_dirs:
        return list_dirs(args.vault, console)
    if args.shell is None:
        console.error("no shell given: pass bash, zsh or fish (see 'mnemosyne completion --help')")
        return exit_status.USAGE
    console.out(script(args.shell, console.env).rstrip("\n"))
    return exit_status.OK


def script(shell: str, env: Environment) -> str:
    """The completion script for ``shell``, generated from the whole command tree."""
    import shtab  # only here: generating a script is the one thing that needs it

    from mnemosyne_cli.arguments import build_parser  # argparse: only a script needs it

    parser = build_parser(env, complete=lambda row: _completes(row, shtab), beside=[COMMAND])
    preamble = PREAMBLES[shell].replace(VAULT_PLACEHOLDER, VAULT.names[0])
    return str(shtab.complete(parser, shell, preamble=preamble))


def _completes(row: Option[Any], shtab: Any) -> object:
    """What shtab completes ``row`` with (its ``action.complete``), by the kind the
    declaration names."""
    if row.complete is None:
        return None
    if row.complete == "constellations":
        from mnemosyne_core.config import CONSTELLATIONS

        return _fixed_words("_mnemosyne_constellations", list(CONSTELLATIONS))
    if row.complete == "lint-codes":
        from mnemosyne_core.lint import REASON_CODES

        return _fixed_words("_mnemosyne_lint_codes", list(REASON_CODES))
    by_kind = {
        "dir": shtab.DIRECTORY,
        "file": shtab.FILE,
        "vault-dirs": {"bash": DIRS_FUNCTION, "zsh": DIRS_FUNCTION, "fish": f"({DIRS_FUNCTION})"},
    }
    return by_kind[row.complete]


def _fixed_words(bash_function: str, words: list[str]) -> dict[str, Any]:
    """shtab's ``complete`` for an argument that takes one of ``words`` (names without
    spaces or quotes): a list for zsh and fish, a compgen function for bash."""
    listed = " ".join(words)
    return {
        "bash": bash_function,
        "zsh": f"({listed})",
        "fish": listed,
        "preamble": {"bash": f'{bash_function}() {{ compgen -W "{listed}" -- "$1"; }}\n'},
    }


def list_dirs(vault: str | None, console: Console) -> int:
    """The dirs --dir can name, sorted, one a line: the vault's top-level dirs (not hidden),
    and every dir its layout searches (in a tree, each dir the scan walks, so nested ones
    too: ``docs/en/guides``). Silent on any error (exit 3): a completion must never print
    into the command line."""
    import contextlib
    import os

    from mnemosyne_core.errors import MnemosyneError
    from mnemosyne_core.location import resolve_vault
    from mnemosyne_core.vault import scan

    try:
        root = resolve_vault(vault, **console.env.vault_lookup())
        with os.scandir(root) as entries:
            found = {entry.name for entry in entries if not entry.name.startswith(".") and entry.is_dir()}
    except (MnemosyneError, OSError):
        return exit_status.VAULT_ERROR
    # A vault find refuses (the home dir, a bad config) still completes its top-level dirs.
    with contextlib.suppress(MnemosyneError, OSError):
        # Lists dirs only (no page is read); hidden and ignored dirs stay out, as for find.
        found.update(rel for rel, _, _ in scan(root, require_dirs=False, home=console.env.home).listing if rel)
    names = sorted(found)
    for name in names:
        if name.isprintable():  # a name with a newline or escape cannot be one completion
            console.out(name)
    return exit_status.OK
