"""``mnemosyne wiki guide``: the guide for agents (how to find pages), from the installed
package, so an agent in any repository can read it in one call."""

from __future__ import annotations

from mnemosyne_cli.options import Arguments, Command, flag
from mnemosyne_contract import exit_status

TYPE_CHECKING = False  # typing's own, without importing typing: start-up time
if TYPE_CHECKING:
    from mnemosyne_cli.output import Console
    from mnemosyne_core.backend import Backend

#: The guide, package data of mnemosyne_cli; docs/agents.md holds the same text.
GUIDE_FILE = "guide.md"
#: The agent skill ``--skill`` prints: its name (a command an agent's harness may offer as
#: ``/wiki-find``) and the description that tells an agent when to load it.
SKILL_NAME = "wiki-find"
SKILL_DESCRIPTION = (
    "Locate a page of the markdown wiki vault by keyword with `mnemosyne wiki find`: deterministic, "
    "no LLM, exact exit codes, a line of context for pages that only mention the keywords. Use it "
    "whenever you need one specific wiki page, or every page that mentions something, before you read or cite it."
)


class GuideArguments(Arguments):
    """``wiki guide``'s arguments."""

    skill = flag(
        "--skill",
        help=f"print it as an agent skill file: frontmatter with name '{SKILL_NAME}' and a description, then the guide",
    )


COMMAND = Command(
    "guide",
    GuideArguments,
    summary="print the guide for agents: how to find pages, in one call",
    description="Print the guide for agents on stdout: how to call 'mnemosyne wiki find' (and when "
    "'recall'), what its output and exit codes mean, in under 4 KB. It is the text of docs/agents.md, "
    "from the installed package, so it matches the installed version. With --skill, the same text as an "
    "agent skill file (SKILL.md), with a frontmatter name and description.",
    examples=[
        "mnemosyne wiki guide",
        "mnemosyne wiki guide --skill > .claude/skills/wiki-find/SKILL.md",
    ],
    exit_codes=[
        (exit_status.OK, "the guide is on stdout"),
        (exit_status.USAGE, "usage error (unknown flag or argument)"),
        (exit_status.WRITE_FAILED, "stdout could not take the guide (closed, disk full)"),
        (exit_status.INTERRUPTED, "interrupted (Ctrl-C)"),
    ],
)


def guide_text() -> str:
    """The guide as the installed package holds it."""
    from importlib.resources import files  # only this command reads package data

    return files("mnemosyne_cli").joinpath(GUIDE_FILE).read_text(encoding="utf-8")


def skill_text() -> str:
    """The guide as an agent skill file: YAML frontmatter (``name``, ``description``),
    then the guide."""
    import json  # a JSON string is a YAML double-quoted scalar: the description's quoting

    return f"---\nname: {SKILL_NAME}\ndescription: {json.dumps(SKILL_DESCRIPTION)}\n---\n\n{guide_text()}"


def run(args: GuideArguments, console: Console, backend: Backend | None) -> int:
    text = skill_text() if args.skill else guide_text()
    console.out_bytes(text.encode("utf-8"))
    return exit_status.OK
