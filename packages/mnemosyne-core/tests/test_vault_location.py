"""Finding the vault (docs/spec.md rule 1): --vault, then a .mnemosyne.toml from the current
directory up, then AION_VAULT, then ``vault`` in the user config; ~ and $VAR expanded in
each."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest
from vault_pages import no_vault_message

from mnemosyne_core import VaultError
from mnemosyne_core.config import expand_path, find_vault_config_upwards, home_dir, user_config_path
from mnemosyne_core.diagnostics import SYMLINK_ESCAPES, Diagnostic
from mnemosyne_core.location import VaultLocation, locate_vault, resolve_vault
from mnemosyne_core.vault import scan


def make_vault(path: Path, config: str | None = None) -> Path:
    (path / "atlas").mkdir(parents=True)
    (path / "atlas" / "a.md").write_text("---\ntitle: A\n---\n", encoding="utf-8")
    if config is not None:
        (path / ".mnemosyne.toml").write_text(config, encoding="utf-8")
    return path


def write_user_config(home: Path, text: str) -> Path:
    path = home / ".config" / "mnemosyne" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_flag_wins_over_every_other_way(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flagged = make_vault(home / "flagged")
    walked = make_vault(home / "walked", config="")
    monkeypatch.chdir(walked / "atlas")
    monkeypatch.setenv("AION_VAULT", str(make_vault(home / "env")))
    write_user_config(home, f'vault = "{make_vault(home / "user")}"\n')
    assert locate_vault(str(flagged)) == VaultLocation(str(flagged), "--vault", str(flagged))


def test_a_vault_config_in_the_cwd_or_a_parent_marks_the_root_and_beats_the_env(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked = make_vault(home / "walked", config="")
    monkeypatch.setenv("AION_VAULT", str(make_vault(home / "env")))
    config = str(walked / ".mnemosyne.toml")
    monkeypatch.chdir(walked)
    assert locate_vault(None) == VaultLocation(str(walked), ".mnemosyne.toml", str(walked), config)
    deep = walked / "atlas" / "drafts" / "old"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert locate_vault(None) == VaultLocation(str(walked), ".mnemosyne.toml", str(walked), config)
    assert locate_vault(None, cwd=str(home)).source == "AION_VAULT"


def test_the_walk_up_stops_at_the_nearest_config_and_at_the_root(home: Path) -> None:
    outer = make_vault(home / "outer", config="")
    inner = make_vault(outer / "atlas" / "inner", config="")
    assert find_vault_config_upwards(str(inner / "atlas")) == str(inner)
    assert find_vault_config_upwards(str(outer / "atlas")) == str(outer)
    assert find_vault_config_upwards(str(home)) is None
    assert find_vault_config_upwards("/") is None


def test_the_env_beats_the_user_config(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = make_vault(home / "env")
    monkeypatch.setenv("AION_VAULT", str(env))
    write_user_config(home, f'vault = "{make_vault(home / "user")}"\n')
    assert locate_vault(None) == VaultLocation(str(env), "AION_VAULT", str(env))


def test_the_user_config_is_the_last_way(home: Path) -> None:
    user = make_vault(home / "user")
    config = write_user_config(home, 'vault = "~/user"\n')
    assert locate_vault(None) == VaultLocation(str(user), "user-config", "~/user", str(config))


def test_xdg_config_home_moves_the_user_config_unless_it_is_relative() -> None:
    assert user_config_path({}, "/h") == "/h/.config/mnemosyne/config.toml"
    assert user_config_path({"XDG_CONFIG_HOME": "/h/xdg"}, "/h") == "/h/xdg/mnemosyne/config.toml"
    # The XDG spec: ignore a relative one.
    assert user_config_path({"XDG_CONFIG_HOME": "relative/dir"}, "/h") == "/h/.config/mnemosyne/config.toml"
    assert user_config_path({"XDG_CONFIG_HOME": ""}, "/h") == "/h/.config/mnemosyne/config.toml"


def test_home_dir_is_read_from_the_environ_given() -> None:
    assert home_dir({"HOME": "/h/"}) == "/h"
    assert home_dir({"HOME": ""}) == "/"
    # No HOME: the user database's, as os.path.expanduser reads it, never the process's HOME.
    assert home_dir({}) == (pwd.getpwuid(os.getuid()).pw_dir.rstrip("/") or "/")


def test_tilde_and_variables_are_expanded_in_each_way(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(home / "my vault")
    monkeypatch.setenv("WIKI", "my vault")
    assert locate_vault("~/$WIKI").path == str(vault)
    assert locate_vault("$HOME/${WIKI}").path == str(vault)
    monkeypatch.setenv("AION_VAULT", "~/${WIKI}")
    assert locate_vault(None) == VaultLocation(str(vault), "AION_VAULT", "~/${WIKI}")
    monkeypatch.delenv("AION_VAULT")
    write_user_config(home, 'vault = "$HOME/$WIKI"\n')
    assert locate_vault(None).path == str(vault)


def test_expand_path_leaves_what_is_not_a_variable(home: Path) -> None:
    environ = {"A": "x"}
    assert expand_path("~", environ, "/h") == "/h"
    assert expand_path("~/a/$A/${A}b", environ, "/h") == "/h/a/x/xb"
    assert expand_path("a/~/$/$1/price$", environ, "/h") == "a/~/$/$1/price$"
    assert expand_path("~nosuchuser-zz/a", environ, "/h") == "~nosuchuser-zz/a"
    assert expand_path("~", {}, "/") == "/"
    assert expand_path("~/a", {}, "/") == "/a"


def test_an_unset_variable_is_an_error_naming_it(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(VaultError) as raised:
        locate_vault("$NO_SUCH_VAR_ZZ/aion")
    assert str(raised.value) == (
        "vault: '$NO_SUCH_VAR_ZZ/aion' uses $NO_SUCH_VAR_ZZ, which is not set: set it or write the path out"
    )
    monkeypatch.setenv("AION_VAULT", "${NO_SUCH_VAR_ZZ}")
    with pytest.raises(VaultError) as raised:
        locate_vault(None)
    assert str(raised.value) == (
        "vault (from AION_VAULT): '${NO_SUCH_VAR_ZZ}' uses $NO_SUCH_VAR_ZZ, which is not set: "
        "set it or write the path out"
    )


def test_no_way_names_a_vault(home: Path) -> None:
    with pytest.raises(VaultError) as raised:
        locate_vault(None)
    assert str(raised.value) == (
        "no vault found: pass --vault PATH, run inside a vault that has a .mnemosyne.toml, set AION_VAULT, "
        f'or set vault = "PATH" in {home}/.config/mnemosyne/config.toml'
    )


def test_the_no_vault_helper_matches_the_session_config_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AION_VAULT", raising=False)
    with pytest.raises(VaultError) as raised:
        resolve_vault(None)
    assert str(raised.value) == no_vault_message()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("vault = [", " is not valid TOML (Invalid value (at end of document)); fix or remove it"),
        ('vault = "/v"\nvalt = "x"\n', " has unknown key(s) valt; allowed: vault"),
        ("vault = 3\n", ': vault must be a non-empty string, e.g. vault = "~/aion"'),
        ('vault = " "\n', ': vault must be a non-empty string, e.g. vault = "~/aion"'),
    ],
)
def test_a_broken_user_config_fails_loudly(home: Path, text: str, problem: str) -> None:
    config = write_user_config(home, text)
    with pytest.raises(VaultError) as raised:
        locate_vault(None)
    assert str(raised.value) == f"{config}{problem}"


def test_a_user_config_without_a_vault_key_names_no_vault(home: Path) -> None:
    write_user_config(home, "# nothing yet\n")
    with pytest.raises(VaultError, match=r"^no vault found: "):
        locate_vault(None)


def test_a_relative_vault_in_the_user_config_is_refused(home: Path) -> None:
    make_vault(home / "aion")
    config = write_user_config(home, 'vault = "aion"\n')
    with pytest.raises(VaultError) as raised:
        locate_vault(None)
    assert str(raised.value) == f"vault 'aion' (from {config}) is not an absolute path: write it from / or ~"


def test_a_missing_vault_names_the_way_that_gave_it(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AION_VAULT", "~/gone")
    with pytest.raises(VaultError) as raised:
        locate_vault(None)
    assert str(raised.value) == (
        f"vault '{home}/gone' (from AION_VAULT) does not exist: set AION_VAULT to your vault root or pass --vault PATH"
    )
    monkeypatch.delenv("AION_VAULT")
    config = write_user_config(home, 'vault = "~/gone"\n')
    with pytest.raises(VaultError) as raised:
        locate_vault(None)
    assert str(raised.value) == f"vault '{home}/gone' (from {config}) does not exist: fix it there or pass --vault PATH"
    (home / "file").write_text("x", encoding="utf-8")
    with pytest.raises(VaultError) as raised:
        locate_vault("~/file")
    assert str(raised.value) == f"vault '{home}/file' is not a directory: pass --vault PATH to your vault root"
    with pytest.raises(VaultError) as raised:
        locate_vault("")
    assert str(raised.value) == "--vault is empty: pass --vault PATH to your vault root"


def test_the_flag_and_the_env_never_read_the_user_config(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(home / "v")
    write_user_config(home, "this is not TOML")
    assert locate_vault(str(vault)).path == str(vault)
    monkeypatch.setenv("AION_VAULT", str(vault))
    assert locate_vault(None).path == str(vault)


def test_a_broken_vault_config_found_walking_up_fails_loudly(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(home / "v", config="dirs = [")
    monkeypatch.chdir(vault / "atlas")
    location = locate_vault(None)
    assert location.path == str(vault)
    with pytest.raises(VaultError, match=r"\.mnemosyne\.toml is not valid TOML"):
        scan(location.path)


def test_a_vault_config_that_is_a_dir_still_marks_the_vault_and_is_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(home / "v")
    (vault / ".mnemosyne.toml").mkdir()
    monkeypatch.chdir(vault)
    assert locate_vault(None).path == str(vault)
    with pytest.raises(VaultError, match=r"\.mnemosyne\.toml is not a regular file"):
        scan(str(vault))


def test_the_walk_up_reports_the_real_root_of_a_symlinked_cwd(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = make_vault(home / "v", config="")
    (home / "link").symlink_to(vault)
    monkeypatch.chdir(home / "link")
    assert locate_vault(None).path == os.path.realpath(vault)


def test_an_escaping_symlink_as_the_only_dir_is_named_with_its_reason(home: Path) -> None:
    outside = make_vault(home / "outside")
    vault = home / "v"
    vault.mkdir()
    (vault / ".mnemosyne.toml").write_text('dirs = ["wiki"]\n', encoding="utf-8")
    (vault / "wiki").symlink_to(outside / "atlas")
    with pytest.raises(VaultError) as raised:
        scan(str(vault))
    assert str(raised.value) == (
        f"vault '{vault}' has no scanned dir find can read (wiki): wiki/ is a symlink to '{outside}/atlas', "
        "outside the vault, which find never reads; move the dir into the vault, or pass the dir that holds it "
        "as --vault"
    )


def test_a_broken_symlink_as_the_only_dir_is_named_with_its_reason(home: Path) -> None:
    vault = home / "v"
    vault.mkdir()
    (vault / "atlas").symlink_to(home / "gone")
    with pytest.raises(VaultError) as raised:
        scan(str(vault), ["atlas", "hades"])
    assert str(raised.value) == (
        f"vault '{vault}' has no scanned dir find can read (atlas, hades): atlas/ is a broken symlink "
        f"(to '{home}/gone'); move the dir into the vault, or pass the dir that holds it as --vault"
    )


def test_a_skipped_symlink_beside_a_listed_dir_is_only_a_warning(home: Path) -> None:
    outside = make_vault(home / "outside")
    vault = make_vault(home / "v")
    (vault / "hades").symlink_to(outside / "atlas")
    result = scan(str(vault), ["atlas", "hades"])
    assert [page.rel_path for page in result.pages] == ["atlas/a.md"]
    assert result.warnings == [Diagnostic("hades", SYMLINK_ESCAPES, is_dir=True)]
