"""200 calls from 8 clients at once, told by a server what changed, while ingest lands
pages: none hangs, every answer is well formed and one of the vault's states, and once
ingest is done the answer is the plain scan's and the server's word is taken (the vault
is not listed)."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from server_harness import ensure_index, run_cli, start_subprocess_server

from mnemosyne_cli import client
from mnemosyne_cli.environment import Environment
from mnemosyne_core.backend import FindRequest
from mnemosyne_ingest import ingest

CLIENTS = 8
CALLS_PER_CLIENT = 25
LINE = re.compile(r"analyses/agent-note-\d+\.md — Agent note \d+")


def test_concurrent_calls_while_ingest_writes(
    tmp_path: Path, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    monkeypatch.setenv(client.TIMEOUT_ENV_VAR, "20")  # eight callers and a writer on a loaded machine
    vault = tmp_path / "vault"
    (vault / "analyses").mkdir(parents=True)
    sources = tmp_path / "sources"
    sources.mkdir()
    for number in range(5):
        (vault / "analyses" / f"agent-note-{number}.md").write_text(
            f"---\ntitle: Agent note {number}\n---\nbody\n", encoding="utf-8"
        )
    ensure_index(vault)
    process = start_subprocess_server(vault)
    words = ["wiki", "find", "agent", "note", "--limit", "0", "--vault", str(vault)]
    answers: list[tuple[list[str], list[str]]] = []
    lock = threading.Lock()
    done_writing = threading.Event()

    def write_pages() -> None:
        for number in range(5, 45):
            source = sources / f"agent-note-{number}.md"
            source.write_text(f"---\ntitle: Agent note {number}\n---\nagent note body\n", encoding="utf-8")
            ingest(source, constellation="atlas", vault=vault)
        done_writing.set()

    def ask_repeatedly() -> None:
        for _ in range(CALLS_PER_CLIENT):
            backend = client.backend_for(Environment(), no_cache=False, no_server=False)
            result = backend.search(FindRequest(str(vault), ["agent", "note"], limit=0))
            lines = [f"{match.path} — {match.title}" for match in result.matches]
            warnings = [repr(warning) for warning in result.warnings]
            with lock:
                answers.append((lines, warnings))

    try:
        writer = threading.Thread(target=write_pages)
        askers = [threading.Thread(target=ask_repeatedly) for _ in range(CLIENTS)]
        writer.start()
        for asker in askers:
            asker.start()
        for thread in [writer, *askers]:
            thread.join(120)
            assert not thread.is_alive(), "a call or the writer hung"
        assert done_writing.is_set()
        assert len(answers) == CLIENTS * CALLS_PER_CLIENT  # nothing lost
        counts = []
        # No call hung (the joins' deadline above); a slow one is no failure: past the
        # client's budget a call lists the vault, and its answer is held to the same checks.
        for lines, warnings in answers:
            assert warnings == []
            assert all(LINE.fullmatch(line) for line in lines), lines
            assert len(set(lines)) == len(lines)
            counts.append(len(lines))
        assert min(counts) >= 5
        assert max(counts) <= 45
        final = run_cli(capsysbinary, words)
        assert final == run_cli(capsysbinary, [*words, "--no-cache"])
        assert final[1].count(b"\n") == 45
        # Nothing changes now: the next call takes the server's word for every page.
        backend = client.backend_for(Environment(), no_cache=False, no_server=False)
        lines = [
            f"{match.path} — {match.title}\n"
            for match in backend.search(FindRequest(str(vault), ["agent", "note"], limit=0)).matches
        ]
        assert "".join(lines).encode() == final[1]
        assert backend.served  # type: ignore[attr-defined]
    finally:
        process.terminate()
        process.wait(10)
    assert os.path.exists(vault)
