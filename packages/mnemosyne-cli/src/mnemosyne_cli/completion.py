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

from mnemosyne_contract import ExitCode

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend

SHELLS = ("bash", "zsh", "fish")

#: The shell function, one per shell, that completes --dir with the vault's dirs. Each
#: passes on the --vault of the command line being completed, with a leading ~ expanded.
#: Named with "_dirs" so that shtab's bash script quotes what it inserts as file names.
DIRS_FUNCTION = "_mnemosyne_vault_dirs"
PREAMBLES = {
    "bash": r"""
# --dir: the vault's own dirs, from `mnemosyne completion --list-dirs [--vault PATH]`.
_mnemosyne_vault_dirs() {
  local i vault=() IFS=$'\n'
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --vault)
        # COMP_WORDBREAKS splits --vault=PATH into three words: --vault, =, PATH.
        if [[ "${COMP_WORDS[i+1]}" == "=" ]]; then ((i++)); fi
        if ((i + 1 < COMP_CWORD)); then vault=(--vault "${COMP_WORDS[i+1]/#\~/$HOME}"); fi ;;
    esac
  done
  compgen -W "$(command mnemosyne completion --list-dirs "${vault[@]}" 2>/dev/null)" -- "$1"
}
""",
    "zsh": r"""
# --dir: the vault's own dirs, from `mnemosyne completion --list-dirs [--vault PATH]`.
_mnemosyne_vault_dirs() {
  local -a dirs vault
  local i=${words[(I)--vault]}
  if (( i && i < CURRENT - 1 )); then
    vault=(--vault "${words[i+1]/#\~/$HOME}")
  elif i=${words[(I)--vault=*]}; (( i && i < CURRENT )); then
    vault=(--vault "${${words[i]#--vault=}/#\~/$HOME}")
  fi
  dirs=(${(f)"$(command mnemosyne completion --list-dirs $vault 2>/dev/null)"})
  compadd -a dirs
}
""",
    "fish": r"""
# --dir: the vault's own dirs, from `mnemosyne completion --list-dirs [--vault PATH]`.
function _mnemosyne_vault_dirs
  set -l tokens (commandline -opc)
  set -l vault
  for i in (seq (count $tokens))
    switch $tokens[$i]
      case --vault
        set -l next (math $i + 1)
        if test $next -le (count $tokens)
          set vault --vault (string replace -r '^~' $HOME -- $tokens[$next])
        end
      case '--vault=*'
        set vault --vault (string replace -r '^--vault=~?' '' -- $tokens[$i])
        if string match -q -- '--vault=~*' $tokens[$i]
          set vault[2] $HOME$vault[2]
        end
    end
  end
  command mnemosyne completion --list-dirs $vault 2>/dev/null
end
""",
}


def register(groups: Any, build_parser: Callable[[], argparse.ArgumentParser]) -> None:
    """Add ``mnemosyne completion`` to ``groups``; ``build_parser`` makes the whole tree
    its scripts complete."""
    import argparse  # not at the top: the console script runs --list-dirs without argparse

    from mnemosyne_cli.help import epilog

    parser = groups.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for SHELL on stdout: it completes commands, "
        "flags, constellations, file and dir arguments, and --dir with the dirs of the vault "
        "(the --vault on the line being completed, else the usual default). Install lines "
        "for each shell are in docs/commands.md.",
        epilog=epilog(
            [
                "mnemosyne completion bash > ~/.local/share/bash-completion/completions/mnemosyne",
                "mnemosyne completion zsh > ~/.zfunc/_mnemosyne   # with fpath+=(~/.zfunc) before compinit",
                "mnemosyne completion fish > ~/.config/fish/completions/mnemosyne.fish",
            ],
            [
                (ExitCode.OK, "the script is on stdout"),
                (ExitCode.USAGE, "usage error: no SHELL, or one other than bash, zsh, fish"),
                (ExitCode.WRITE_FAILED, "stdout could not take the script (closed, disk full)"),
            ],
        ),
    )
    parser.add_argument("shell", nargs="?", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    # The scripts' helper: hidden from --help and from the scripts themselves.
    parser.add_argument("--list-dirs", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--vault", metavar="PATH", help=argparse.SUPPRESS)
    # The whole tree comes from the caller: importing app here would be an import cycle.
    parser.set_defaults(handler=run, build_parser=build_parser)


def run(args: argparse.Namespace, console: Console, backend: Backend) -> int:
    if args.list_dirs:
        return list_dirs(args.vault, console)
    if args.shell is None:
        console.error("no shell given: pass bash, zsh or fish (see 'mnemosyne completion --help')")
        return ExitCode.USAGE
    console.out(script(args.shell, args.build_parser()).rstrip("\n"))
    return ExitCode.OK


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for ``shell``, generated from the whole command tree ``parser``."""
    import shtab  # only here: generating a script is the one thing that needs it

    _mark_arguments(parser, shtab)
    return str(shtab.complete(parser, shell, preamble=PREAMBLES[shell]))


def _mark_arguments(parser: argparse.ArgumentParser, shtab: Any) -> None:
    """Tell shtab what each argument takes (``action.complete``), through the whole tree
    (a tree built for the script alone, so changing it is safe)."""
    import argparse

    from mnemosyne_core.config import CONSTELLATIONS
    from mnemosyne_core.lint import REASON_CODES

    vault_dirs = {"bash": DIRS_FUNCTION, "zsh": DIRS_FUNCTION, "fish": f"({DIRS_FUNCTION})"}
    lint_codes = _fixed_words("_mnemosyne_lint_codes", list(REASON_CODES))
    by_option = {
        "--dir": vault_dirs,
        "--vault": shtab.DIRECTORY,
        "--memory-dir": shtab.DIRECTORY,
        "--constellation": _fixed_words("_mnemosyne_constellations", list(CONSTELLATIONS)),
        "--select": lint_codes,
        "--ignore": lint_codes,
    }
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._get_subactions()}
            for name, subparser in action.choices.items():
                # shtab shows a command's description beside it; the one-line help fits.
                subparser.description = helps.get(name) or subparser.description
                _mark_arguments(subparser, shtab)
        elif action.dest == "source" and not action.option_strings:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
        else:
            for option in action.option_strings:
                if option in by_option:
                    action.complete = by_option[option]  # type: ignore[attr-defined]


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


def list_dirs_arguments(words: list[str]) -> tuple[str | None] | None:
    """The vault of a ``completion --list-dirs [--vault PATH]`` call as the scripts make
    it, or None for any other call (then argparse parses it). The console script runs such
    a call without argparse: it is made on every Tab."""
    if words[:2] != ["completion", "--list-dirs"] or any("\0" in word for word in words):
        return None
    rest = words[2:]
    if not rest:
        return (None,)
    if len(rest) == 2 and rest[0] == "--vault" and not rest[1].startswith("-"):
        return (rest[1],)
    if len(rest) == 1 and rest[0].startswith("--vault=") and not rest[0].startswith("--vault=-"):
        return (rest[0].removeprefix("--vault="),)
    return None


def list_dirs(vault: str | None, console: Console) -> int:
    """The dirs --dir can name, sorted, one a line: the vault's top-level dirs (not hidden),
    and every dir its layout searches (in a tree, each dir the scan walks, so nested ones
    too: ``docs/en/guides``). Silent on any error (exit 3): a completion must never print
    into the command line."""
    import contextlib
    import os

    from mnemosyne_core.errors import MnemosyneError
    from mnemosyne_core.vault import resolve_vault, scan

    try:
        root = resolve_vault(vault, **console.env.vault_lookup())
        with os.scandir(root) as entries:
            found = {entry.name for entry in entries if not entry.name.startswith(".") and entry.is_dir()}
    except (MnemosyneError, OSError):
        return ExitCode.VAULT_ERROR
    # A vault find refuses (the home dir, a bad config) still completes its top-level dirs.
    with contextlib.suppress(MnemosyneError, OSError):
        # Lists dirs only (no page is read); hidden and ignored dirs stay out, as for find.
        found.update(rel for rel, _, _ in scan(root, require_dirs=False).listing if rel)
    names = sorted(found)
    for name in names:
        if name.isprintable():  # a name with a newline or escape cannot be one completion
            console.out(name)
    return ExitCode.OK
