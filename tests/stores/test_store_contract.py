"""The one contract every store and broker keeps: memory, SQLite and a real redis-server.

"Expired" is tested with expiries already in the past, so nothing here waits for a clock.
A one-time token is remembered until its expiry and accepted again after it: callers
pick an expiry no earlier than that of what the token guards.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from elicitkit.stores import Broker, FencedStore, FirstRoundStore, RoundStore, SQLiteStore, Store
from tests.redis_server import RedisServer
from tests.stores.conftest import EXPIRING, unique_prefix

pytestmark = pytest.mark.anyio

ODD_BYTES = bytes(range(256)) + b"\xff\xfe\x00\x80 not utf-8 \xc3\x28"


def later() -> float:
    return time.time() + 3600


def earlier() -> float:
    return time.time() - 1


# Runs


async def test_every_store_implements_the_protocol(store: Store) -> None:
    assert isinstance(store, Store)


async def test_a_stored_run_reads_back_with_its_owner(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())

    assert await store.get_run("run-1") == ("node-a", b"record")
    assert await store.get_run("run-2") is None


async def test_putting_a_run_again_replaces_it(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"first", later())
    await store.put_run("run-1", "node-b", b"second", later())

    assert await store.get_run("run-1") == ("node-b", b"second")


async def test_an_expired_run_is_invisible(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", earlier())

    assert await store.get_run("run-1") is None


async def test_a_run_that_never_expires_stays(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", math.inf)
    await store.sweep()

    assert await store.get_run("run-1") == ("node-a", b"record")


async def test_claiming_a_run_moves_it_only_from_the_expected_owner(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())

    assert await store.claim_run("run-1", "node-b", "node-c") is False
    assert await store.get_run("run-1") == ("node-a", b"record")
    assert await store.claim_run("run-1", "node-a", "node-b") is True
    assert await store.get_run("run-1") == ("node-b", b"record")
    assert await store.claim_run("run-1", "node-a", "node-c") is False


async def test_an_unknown_or_expired_run_cannot_be_claimed(store: Store) -> None:
    await store.put_run("gone", "node-a", b"record", earlier())

    assert await store.claim_run("unknown", "node-a", "node-b") is False
    assert await store.claim_run("gone", "node-a", "node-b") is False
    assert await store.get_run("gone") is None


async def test_of_twenty_concurrent_claims_from_the_same_owner_exactly_one_wins(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())
    won: list[str] = []

    async def claim(new_owner: str) -> None:
        if await store.claim_run("run-1", "node-a", new_owner):
            won.append(new_owner)

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(claim, f"node-{i}")

    assert len(won) == 1
    assert await store.get_run("run-1") == (won[0], b"record")


async def test_deleting_a_run_removes_its_journal_and_questions_and_nothing_else(store: Store) -> None:
    for run_id in ("run-1", "run-2"):
        await store.put_run(run_id, "node-a", b"record", later())
        await store.append_journal(run_id, 0, b"answer")
        await store.put_question(f"{run_id}-q", run_id, b"question", later())

    await store.delete_run("run-1")

    assert await store.get_run("run-1") is None
    assert await store.journal("run-1") == {}
    assert await store.get_question("run-1-q") is None
    assert await store.run_questions("run-1") == {}
    assert await store.get_run("run-2") == ("node-a", b"record")
    assert await store.journal("run-2") == {0: b"answer"}
    assert await store.run_questions("run-2") == {"run-2-q": b"question"}


async def test_deleting_an_unknown_run_is_harmless(store: Store) -> None:
    await store.delete_run("unknown")


async def stored_run(store: Store, run_id: str, journaled: dict[int, bytes], questions: list[str]) -> None:
    """A live run of node-a's, with journal entries and open questions."""
    await store.put_run(run_id, "node-a", b"record", later())
    for seq, entry in journaled.items():
        await store.append_journal(run_id, seq, entry)
    for question_id in questions:
        await store.put_question(question_id, run_id, b"question", later())


async def test_every_built_in_store_deletes_a_run_fenced_by_its_owner(store: Store) -> None:
    assert isinstance(store, FencedStore)


async def test_a_run_is_deleted_for_its_owner_and_kept_for_another_node(store: Store) -> None:
    """A node finishing a run another node has taken over must leave the new owner's records alone."""
    assert isinstance(store, FencedStore)
    await stored_run(store, "run-1", {0: b"answer"}, ["run-1-q"])

    assert await store.delete_owned_run("run-1", "node-b") is False
    assert await store.get_run("run-1") == ("node-a", b"record")
    assert await store.journal("run-1") == {0: b"answer"}
    assert await store.run_questions("run-1") == {"run-1-q": b"question"}

    assert await store.delete_owned_run("run-1", "node-a") is True
    assert await store.get_run("run-1") is None
    assert await store.journal("run-1") == {}
    assert await store.get_question("run-1-q") is None


async def test_what_is_left_of_an_expired_or_unknown_run_goes_for_any_node(store: Store) -> None:
    assert isinstance(store, FencedStore)
    await store.put_run("gone", "node-a", b"record", earlier())
    await store.append_journal("gone", 0, b"answer")

    assert await store.delete_owned_run("gone", "node-b") is True
    assert await store.journal("gone") == {}
    assert await store.delete_owned_run("unknown", "node-b") is True


async def test_a_run_is_renewed_for_its_owner_and_left_to_a_node_that_took_it_over(store: Store) -> None:
    """A node renewing (or keeping, once finished) a run another node has taken over must not take it back."""
    assert isinstance(store, FencedStore)
    await stored_run(store, "run-1", {0: b"answer"}, ["run-1-q"])

    assert await store.put_owned_run("run-1", "node-b", b"taken back", later()) == "node-a"
    assert await store.get_run("run-1") == ("node-a", b"record")

    assert await store.put_owned_run("run-1", "node-a", b"renewed", later()) is None
    assert await store.get_run("run-1") == ("node-a", b"renewed")
    assert await store.journal("run-1") == {0: b"answer"}  # renewing a run keeps its journal


async def test_a_fenced_write_of_an_expired_or_unknown_run_goes_through_for_any_node(store: Store) -> None:
    assert isinstance(store, FencedStore)
    await store.put_run("gone", "node-a", b"record", earlier())
    assert await store.put_owned_run("gone", "node-b", b"mine now", later()) is None
    assert await store.get_run("gone") == ("node-b", b"mine now")

    assert await store.put_owned_run("unknown", "node-b", ODD_BYTES, later()) is None
    assert await store.get_run("unknown") == ("node-b", ODD_BYTES)


async def test_a_fenced_write_sets_the_expiry_of_the_run_and_its_journal(store: Store) -> None:
    assert isinstance(store, FencedStore)
    await store.put_run("run-1", "node-a", b"record", later())
    await store.append_journal("run-1", 0, b"answer")
    assert await store.put_owned_run("run-1", "node-a", b"record", earlier()) is None
    assert await store.get_run("run-1") is None
    await store.sweep()
    assert await store.journal("run-1") == {}


async def test_a_run_is_stored_with_its_first_question_in_one_step(store: Store) -> None:
    assert isinstance(store, FirstRoundStore)
    await store.put_run_with_question("run-1", "node-a", ODD_BYTES, later(), "run-1-q", b"question", later())
    assert await store.get_run("run-1") == ("node-a", ODD_BYTES)
    assert await store.get_question("run-1-q") == ("run-1", b"question")
    assert await store.run_questions("run-1") == {"run-1-q": b"question"}
    await store.append_journal("run-1", 0, b"answer")
    assert await store.journal("run-1") == {0: b"answer"}  # the run lives: its journal is kept

    await store.delete_run("run-1")  # its question goes with it, as one filed with `put_question` would
    assert await store.get_question("run-1-q") is None


async def test_a_first_question_expires_on_its_own_expiry_not_its_runs(store: Store) -> None:
    assert isinstance(store, FirstRoundStore)
    await store.put_run_with_question("run-1", "node-a", b"record", later(), "run-1-q", b"question", earlier())
    assert await store.get_run("run-1") == ("node-a", b"record")
    assert await store.get_question("run-1-q") is None
    assert await store.run_questions("run-1") == {}


async def test_every_built_in_store_takes_a_round_in_one_step(store: Store) -> None:
    assert isinstance(store, RoundStore)


async def test_taking_a_round_spends_its_token_journals_its_answers_and_forgets_its_questions(store: Store) -> None:
    assert isinstance(store, RoundStore)
    await stored_run(store, "run-1", {1: b"earlier"}, ["q1", "q2", "q3"])

    token = "round:{run-1}:n1"
    written = await store.take_round("run-1", token, later(), {1: b"late", 2: ODD_BYTES}, ["q1", "q2"], ODD_BYTES)

    assert written == {2}  # the first writer of seq 1 wins, as with append_journal
    assert await store.journal("run-1") == {1: b"earlier", 2: ODD_BYTES}
    assert await store.run_questions("run-1") == {"q3": b"question"}
    assert await store.get_question("q1") is None
    assert await store.spent(token) == ODD_BYTES
    assert await store.use_once(token, later()) is False
    assert await store.spent(token) == ODD_BYTES


async def test_a_round_whose_token_was_spent_changes_nothing(store: Store) -> None:
    assert isinstance(store, RoundStore)
    await stored_run(store, "run-1", {}, ["q1"])
    assert await store.use_once("round:{run-1}:n1", later(), b"first") is True

    assert await store.take_round("run-1", "round:{run-1}:n1", later(), {1: b"answer"}, ["q1"], b"other") is None
    assert await store.take_round("run-1", "round:{run-1}:n1", earlier(), {1: b"answer"}, ["q1"], b"other") is None

    assert await store.journal("run-1") == {}
    assert await store.get_question("q1") == ("run-1", b"question")
    assert await store.spent("round:{run-1}:n1") == b"first"


async def test_of_twenty_concurrent_takes_of_one_round_exactly_one_wins(store: Store) -> None:
    assert isinstance(store, RoundStore)
    await store.put_run("run-1", "node-a", b"record", later())
    won: list[bytes] = []

    async def take(i: int) -> None:
        entry = f"answer-{i}".encode()
        if (
            await store.take_round("run-1", "round:{run-1}:n1", later(), {1: entry}, [], b"value of " + entry)
            is not None
        ):
            won.append(entry)

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(take, i)

    assert len(won) == 1
    assert await store.journal("run-1") == {1: won[0]}
    assert await store.spent("round:{run-1}:n1") == b"value of " + won[0]


async def test_a_round_whose_token_memory_expired_is_taken_again_with_its_new_value(store: Store) -> None:
    assert isinstance(store, RoundStore)
    assert await store.take_round("run-1", "round:{run-1}:n1", earlier(), {}, [], b"old") == set()
    assert await store.spent("round:{run-1}:n1") is None

    assert await store.take_round("run-1", "round:{run-1}:n1", later(), {}, [], b"") == set()
    assert await store.spent("round:{run-1}:n1") == b""


async def test_a_round_with_a_token_that_never_expires_and_nothing_to_journal(store: Store) -> None:
    assert isinstance(store, RoundStore)
    assert await store.take_round("run-1", "round:{run-1}:n1", math.inf, {}, []) == set()
    assert await store.take_round("run-1", "round:{run-1}:n1", math.inf, {}, []) is None
    assert await store.spent("round:{run-1}:n1") == b"1"


# Journals


async def test_the_first_write_of_a_journal_entry_wins(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())

    assert await store.append_journal("run-1", 0, b"first") is True
    assert await store.append_journal("run-1", 0, b"second") is False
    assert await store.journal("run-1") == {0: b"first"}


async def test_the_journal_returns_every_entry_by_sequence_number(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())
    await store.put_run("run-2", "node-a", b"record", later())
    for seq in (2, 0, 1):
        assert await store.append_journal("run-1", seq, f"entry {seq}".encode()) is True
    await store.append_journal("run-2", 0, b"other run")

    assert await store.journal("run-1") == {0: b"entry 0", 1: b"entry 1", 2: b"entry 2"}
    assert await store.journal("unknown") == {}


async def test_of_concurrent_writes_of_one_journal_entry_exactly_one_wins(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())
    won: list[bytes] = []

    async def append(entry: bytes) -> None:
        if await store.append_journal("run-1", 7, entry):
            won.append(entry)

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(append, f"writer {i}".encode())

    assert len(won) == 1
    assert await store.journal("run-1") == {7: won[0]}


# Questions


async def test_questions_read_back_by_id_and_by_run(store: Store) -> None:
    await store.put_question("q-1", "run-1", b"first", later())
    await store.put_question("q-2", "run-1", b"second", later())
    await store.put_question("q-3", "run-2", b"third", later())

    assert await store.get_question("q-1") == ("run-1", b"first")
    assert await store.get_question("q-3") == ("run-2", b"third")
    assert await store.get_question("q-4") is None
    assert await store.run_questions("run-1") == {"q-1": b"first", "q-2": b"second"}
    assert await store.run_questions("run-3") == {}


async def test_an_expired_question_is_invisible_by_id_and_by_run(store: Store) -> None:
    await store.put_question("q-live", "run-1", b"live", later())
    await store.put_question("q-gone", "run-1", b"gone", earlier())

    assert await store.get_question("q-gone") is None
    assert await store.run_questions("run-1") == {"q-live": b"live"}


async def test_a_question_put_again_with_a_past_expiry_expires(store: Store) -> None:
    await store.put_question("q-1", "run-1", b"record", later())
    await store.put_question("q-1", "run-1", b"record", earlier())

    assert await store.get_question("q-1") is None
    assert await store.run_questions("run-1") == {}


async def test_a_deleted_question_leaves_its_run(store: Store) -> None:
    await store.put_question("q-1", "run-1", b"first", later())
    await store.put_question("q-2", "run-1", b"second", later())

    await store.delete_question("q-1")
    await store.delete_question("unknown")

    assert await store.get_question("q-1") is None
    assert await store.run_questions("run-1") == {"q-2": b"second"}


async def test_a_question_put_again_under_another_run_moves_there(store: Store) -> None:
    await store.put_question("q-1", "run-1", b"first", later())
    await store.put_question("q-1", "run-2", b"moved", later())

    assert await store.get_question("q-1") == ("run-2", b"moved")
    assert await store.run_questions("run-1") == {}
    assert await store.run_questions("run-2") == {"q-1": b"moved"}


# One-time tokens


async def test_a_token_is_accepted_once_while_it_is_remembered(store: Store) -> None:
    assert await store.use_once("token-1", later()) is True
    assert await store.use_once("token-1", later()) is False
    assert await store.use_once("token-2", later()) is True


async def test_a_token_whose_memory_expired_is_accepted_again(store: Store) -> None:
    assert await store.use_once("token-1", earlier()) is True
    assert await store.use_once("token-1", later()) is True
    assert await store.use_once("token-1", later()) is False


async def test_of_concurrent_uses_of_a_token_exactly_one_is_accepted_and_its_value_stays(store: Store) -> None:
    accepted: list[bytes] = []

    async def use(i: int) -> None:
        value = f"request-{i}".encode()
        if await store.use_once("token-1", later(), value):
            accepted.append(value)

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(use, i)

    assert len(accepted) == 1
    assert await store.spent("token-1") == accepted[0]


async def test_a_token_remembers_the_value_it_was_spent_with(store: Store) -> None:
    assert await store.spent("token-1") is None
    assert await store.use_once("token-1", later(), b"request digest") is True
    assert await store.use_once("token-2", later()) is True

    assert await store.spent("token-1") == b"request digest"
    assert await store.spent("token-2") == b"1"
    assert await store.spent("token-3") is None


async def test_a_token_value_is_kept_byte_for_byte(store: Store) -> None:
    await store.use_once("odd", later(), ODD_BYTES)
    await store.use_once("empty", later(), b"")
    await store.use_once("forever", math.inf, ODD_BYTES * 100)

    assert await store.spent("odd") == ODD_BYTES
    assert await store.spent("empty") == b""
    assert await store.spent("forever") == ODD_BYTES * 100


async def test_a_refused_use_of_a_token_changes_neither_its_value_nor_its_expiry(store: Store) -> None:
    assert await store.use_once("token-1", later(), b"first") is True

    assert await store.use_once("token-1", later(), b"second") is False
    assert await store.use_once("token-1", earlier(), b"third") is False  # would expire it, were it written

    assert await store.spent("token-1") == b"first"


async def test_a_token_whose_memory_expired_has_no_value_and_records_the_next_one(store: Store) -> None:
    assert await store.use_once("token-1", earlier(), b"old") is True
    assert await store.spent("token-1") is None

    assert await store.use_once("token-1", later(), b"new") is True
    assert await store.spent("token-1") == b"new"


async def test_sweeping_forgets_expired_tokens_with_their_values(store: Store, store_kind: str) -> None:
    await store.use_once("token-live", later(), b"live")
    await store.use_once("token-gone", earlier(), b"gone")

    assert await store.sweep() == (0 if store_kind in EXPIRING else 1)  # Redis has dropped it natively
    assert await store.sweep() == 0
    assert await store.spent("token-live") == b"live"
    assert await store.spent("token-gone") is None
    assert await store.use_once("token-gone", later(), b"again") is True
    assert await store.spent("token-gone") == b"again"


# Heartbeats


async def test_a_node_is_alive_until_its_heartbeat_expires(store: Store) -> None:
    assert await store.is_alive("node-a") is False

    await store.heartbeat("node-a", later())
    assert await store.is_alive("node-a") is True
    assert await store.is_alive("node-b") is False

    await store.heartbeat("node-a", earlier())
    assert await store.is_alive("node-a") is False

    await store.heartbeat("node-a", later())
    assert await store.is_alive("node-a") is True


# Tasks


async def test_a_stored_task_reads_back_and_putting_it_again_replaces_it(store: Store) -> None:
    await store.put_task("task-1", b"working", later())
    assert await store.get_task("task-1") == b"working"
    assert await store.get_task("task-2") is None

    await store.put_task("task-1", b"completed", later())
    assert await store.get_task("task-1") == b"completed"


async def test_an_expired_task_is_invisible(store: Store) -> None:
    await store.put_task("task-gone", b"working", earlier())
    await store.put_task("task-ended", b"working", later())
    await store.put_task("task-ended", b"completed", earlier())

    assert await store.get_task("task-gone") is None
    assert await store.get_task("task-ended") is None


async def test_a_task_that_never_expires_stays(store: Store) -> None:
    await store.put_task("task-1", b"working", later())
    await store.put_task("task-1", b"completed", math.inf)
    await store.sweep()

    assert await store.get_task("task-1") == b"completed"


# Inbox entries


async def test_inbox_entries_read_back_by_inbox_and_inboxes_never_mix(store: Store) -> None:
    await store.put_inbox_entry("inbox-a", "e-1", b"first", later())
    await store.put_inbox_entry("inbox-a", "e-2", b"second", later())
    await store.put_inbox_entry("inbox-b", "e-3", b"third", later())

    assert await store.inbox_entries("inbox-a") == {"e-1": b"first", "e-2": b"second"}
    assert await store.inbox_entries("inbox-b") == {"e-3": b"third"}
    assert await store.inbox_entries("inbox-c") == {}


async def test_putting_an_inbox_entry_again_replaces_it(store: Store) -> None:
    await store.put_inbox_entry("inbox-a", "e-1", b"first", later())
    await store.put_inbox_entry("inbox-a", "e-1", b"second", later())

    assert await store.inbox_entries("inbox-a") == {"e-1": b"second"}


async def test_each_inbox_entry_expires_on_its_own_expiry(store: Store) -> None:
    await store.put_inbox_entry("inbox-a", "e-live", b"live", later())
    await store.put_inbox_entry("inbox-a", "e-forever", b"forever", math.inf)
    await store.put_inbox_entry("inbox-a", "e-gone", b"gone", earlier())
    await store.put_inbox_entry("inbox-a", "e-closed", b"closed", later())
    await store.put_inbox_entry("inbox-a", "e-closed", b"closed", earlier())
    await store.sweep()

    assert await store.inbox_entries("inbox-a") == {"e-live": b"live", "e-forever": b"forever"}


async def test_an_inbox_entry_filed_under_another_inbox_moves_there(store: Store) -> None:
    await store.put_inbox_entry("inbox-a", "e-1", b"first", later())
    await store.put_inbox_entry("inbox-b", "e-1", b"moved", later())

    assert await store.inbox_entries("inbox-a") == {}
    assert await store.inbox_entries("inbox-b") == {"e-1": b"moved"}


async def test_a_deleted_inbox_entry_leaves_its_inbox_and_only_its_own_inbox_can_delete_it(store: Store) -> None:
    await store.put_inbox_entry("inbox-a", "e-1", b"first", later())
    await store.put_inbox_entry("inbox-a", "e-2", b"second", later())

    await store.delete_inbox_entry("inbox-a", "e-1")
    await store.delete_inbox_entry("inbox-b", "e-2")  # e-2 is not in inbox-b: nothing happens
    await store.delete_inbox_entry("inbox-a", "unknown")

    assert await store.inbox_entries("inbox-a") == {"e-2": b"second"}
    assert await store.inbox_entries("inbox-b") == {}


# Tasks and inbox entries stand apart from runs


async def test_deleting_a_run_leaves_tasks_and_inbox_entries_alone(store: Store) -> None:
    await stored_run(store, "run-1", {0: b"answer"}, ["q-1"])
    await store.put_task("run-1", b"task", later())
    await store.put_inbox_entry("inbox-a", "q-1", b"entry", later())
    await store.put_inbox_entry("run-1", "e-1", b"entry", later())

    await store.delete_run("run-1")

    assert await store.get_run("run-1") is None
    assert await store.get_task("run-1") == b"task"
    assert await store.inbox_entries("inbox-a") == {"q-1": b"entry"}
    assert await store.inbox_entries("run-1") == {"e-1": b"entry"}


async def test_a_run_a_question_a_task_and_an_inbox_entry_sharing_an_id_are_kept_apart(store: Store) -> None:
    await store.put_run("x", "node-a", b"run", later())
    await store.put_question("x", "x", b"question", later())
    await store.put_task("x", b"task", later())
    await store.put_inbox_entry("x", "x", b"entry", later())

    assert await store.get_run("x") == ("node-a", b"run")
    assert await store.get_question("x") == ("x", b"question")
    assert await store.run_questions("x") == {"x": b"question"}
    assert await store.get_task("x") == b"task"
    assert await store.inbox_entries("x") == {"x": b"entry"}

    await store.delete_question("x")
    await store.delete_inbox_entry("x", "x")
    assert await store.get_task("x") == b"task"
    assert await store.get_run("x") == ("node-a", b"run")


# Sweeping


async def test_sweeping_removes_expired_tasks_and_inbox_entries(store: Store, store_kind: str) -> None:
    await store.put_task("task-live", b"kept", later())
    await store.put_task("task-gone", b"swept", earlier())
    await store.put_inbox_entry("inbox-a", "e-live", b"kept", later())
    await store.put_inbox_entry("inbox-a", "e-gone", b"swept", earlier())

    swept = await store.sweep()

    assert swept == (0 if store_kind in EXPIRING else 2)  # Redis has dropped them natively
    assert await store.sweep() == 0
    assert await store.get_task("task-live") == b"kept"
    assert await store.get_task("task-gone") is None
    assert await store.inbox_entries("inbox-a") == {"e-live": b"kept"}


async def test_sweeping_removes_what_expired_and_keeps_what_lives(store: Store, store_kind: str) -> None:
    await store.put_run("live", "node-a", b"record", later())
    await store.append_journal("live", 0, b"kept")
    await store.put_question("q-live", "live", b"kept", later())
    await store.use_once("token-live", later())
    await store.heartbeat("node-live", later())

    await store.put_run("gone", "node-a", b"record", earlier())
    await store.append_journal("gone", 0, b"swept")
    await store.append_journal("gone", 1, b"swept")
    await store.put_question("q-gone", "live", b"swept", earlier())
    await store.use_once("token-gone", earlier())
    await store.heartbeat("node-gone", earlier())

    swept = await store.sweep()

    # memory and SQLite count the run, its 2 journal entries, the question, the token and the heartbeat;
    # Redis has dropped them all itself (the journal as it was written: its run was already gone).
    assert swept == (0 if store_kind in EXPIRING else 6)
    assert await store.sweep() == 0
    assert await store.get_run("live") == ("node-a", b"record")
    assert await store.journal("live") == {0: b"kept"}
    assert await store.run_questions("live") == {"q-live": b"kept"}
    assert await store.use_once("token-live", later()) is False
    assert await store.is_alive("node-live") is True
    assert await store.get_run("gone") is None
    assert await store.journal("gone") == {}
    assert await store.get_question("q-gone") is None
    assert await store.use_once("token-gone", later()) is True
    assert await store.is_alive("node-gone") is False


async def test_a_run_that_expires_takes_its_journal_with_it(store: Store) -> None:
    await store.put_run("run-1", "node-a", b"record", later())
    await store.append_journal("run-1", 0, b"answer")

    await store.put_run("run-1", "node-a", b"record", earlier())
    await store.sweep()

    assert await store.journal("run-1") == {}


# Values


async def test_values_are_stored_byte_for_byte(store: Store) -> None:
    await store.put_run("run-1", "node-a", ODD_BYTES, later())
    await store.append_journal("run-1", 0, ODD_BYTES)
    await store.append_journal("run-1", 1, b"")
    await store.put_question("q-1", "run-1", ODD_BYTES * 100, later())
    await store.put_task("task-1", ODD_BYTES, later())
    await store.put_task("task-2", b"", later())
    await store.put_inbox_entry("inbox-a", "e-1", ODD_BYTES, later())
    await store.put_inbox_entry("inbox-a", "e-2", b"", later())

    assert await store.get_task("task-1") == ODD_BYTES
    assert await store.get_task("task-2") == b""
    assert await store.inbox_entries("inbox-a") == {"e-1": ODD_BYTES, "e-2": b""}
    assert await store.get_run("run-1") == ("node-a", ODD_BYTES)
    assert await store.journal("run-1") == {0: ODD_BYTES, 1: b""}
    assert await store.get_question("q-1") == ("run-1", ODD_BYTES * 100)
    assert await store.run_questions("run-1") == {"q-1": ODD_BYTES * 100}


async def test_ids_with_separators_and_unicode_are_kept_apart(store: Store) -> None:
    ids = ["a:b", "a", "a:b:c", "*", "Zürich ✓", "run-questions:x"]
    for i, run_id in enumerate(ids):
        await store.put_run(run_id, f"node:{i}", str(i).encode(), later())
        await store.put_question(f"q:{run_id}", run_id, str(i).encode(), later())
        await store.put_task(run_id, str(i).encode(), later())
        await store.put_inbox_entry(run_id, f"e:{run_id}", str(i).encode(), later())

    for i, run_id in enumerate(ids):
        assert await store.get_run(run_id) == (f"node:{i}", str(i).encode())
        assert await store.run_questions(run_id) == {f"q:{run_id}": str(i).encode()}
        assert await store.get_task(run_id) == str(i).encode()
        assert await store.inbox_entries(run_id) == {f"e:{run_id}": str(i).encode()}


# SQLite


async def test_a_sqlite_store_keeps_everything_when_closed_and_reopened(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    first = SQLiteStore(path)
    await first.put_run("run-1", "node-a", ODD_BYTES, later())
    await first.append_journal("run-1", 0, b"answer")
    await first.put_question("q-1", "run-1", b"question", later())
    await first.use_once("token-1", later(), ODD_BYTES)
    await first.heartbeat("node-a", later())
    await first.put_task("task-1", b"task", later())
    await first.put_inbox_entry("inbox-a", "e-1", b"entry", later())
    await first.aclose()

    second = SQLiteStore(path)
    try:
        assert await second.get_run("run-1") == ("node-a", ODD_BYTES)
        assert await second.journal("run-1") == {0: b"answer"}
        assert await second.run_questions("run-1") == {"q-1": b"question"}
        assert await second.use_once("token-1", later()) is False
        assert await second.spent("token-1") == ODD_BYTES
        assert await second.is_alive("node-a") is True
        assert await second.append_journal("run-1", 0, b"again") is False
        assert await second.get_task("task-1") == b"task"
        assert await second.inbox_entries("inbox-a") == {"e-1": b"entry"}
    finally:
        await second.aclose()


async def test_a_sqlite_file_from_before_tasks_and_inbox_entries_gains_their_tables(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await SQLiteStore(path).aclose()
    with closing(sqlite3.connect(path)) as db:
        db.executescript("DROP TABLE tasks; DROP TABLE inbox;")
    store = SQLiteStore(path)
    try:
        await store.put_task("task-1", b"task", later())
        await store.put_inbox_entry("inbox-a", "e-1", b"entry", later())

        assert await store.get_task("task-1") == b"task"
        assert await store.inbox_entries("inbox-a") == {"e-1": b"entry"}
    finally:
        await store.aclose()


OLD_ONCE_TABLE = "CREATE TABLE once (token TEXT PRIMARY KEY, expires_at REAL NOT NULL)"


async def test_a_sqlite_file_whose_tokens_were_spent_without_values_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    await SQLiteStore(path).aclose()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TABLE once")
        db.execute(OLD_ONCE_TABLE)
        db.execute("INSERT INTO once (token, expires_at) VALUES ('token-old', ?)", (later(),))
    store = SQLiteStore(path)
    try:
        assert await store.spent("token-old") == b"1"
        assert await store.use_once("token-old", later(), b"replayed") is False
        assert await store.use_once("token-new", later(), ODD_BYTES) is True
    finally:
        await store.aclose()
    reopened = SQLiteStore(path)  # finds the file migrated already
    try:
        assert await reopened.spent("token-old") == b"1"
        assert await reopened.spent("token-new") == ODD_BYTES
    finally:
        await reopened.aclose()


# Redis


RawRedis = tuple[Any, Any, str]
"""A Redis store under a fresh prefix, a raw client to look at its keys, and that prefix."""


@pytest.fixture
async def raw_redis(redis_server: RedisServer) -> AsyncIterator[RawRedis]:
    import redis.asyncio as aioredis

    from elicitkit.stores.redis import RedisStore

    prefix = unique_prefix()
    store = RedisStore(redis_server.url, prefix=prefix)
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        yield store, raw, prefix
    finally:
        await raw.aclose()
        await store.aclose()


async def test_every_expiring_redis_key_carries_a_native_ttl(raw_redis: RawRedis) -> None:
    store, raw, prefix = raw_redis
    await store.put_run("run-1", "node-a", b"record", later())
    await store.append_journal("run-1", 0, b"answer")
    await store.put_question("q-1", "run-1", b"question", later())
    await store.use_once("token-1", later())
    await store.heartbeat("node-a", later())
    await store.put_task("task-1", b"task", later())
    await store.put_inbox_entry("inbox-a", "e-1", b"entry", later())
    await store.put_run("forever", "node-a", b"record", math.inf)
    await store.put_task("forever", b"task", later())
    await store.put_task("forever", b"task", math.inf)

    keys = sorted([key.decode() async for key in raw.scan_iter(match=f"{prefix}*")])
    names = [
        "inbox-entry:e-1",
        "inbox:inbox-a",
        "journal:run-1",
        "node:node-a",
        "once:token-1",
        "question:q-1",
        "run-questions:run-1",
        "run:forever",
        "run:run-1",
        "task:forever",
        "task:task-1",
    ]
    assert keys == [f"{prefix}{name}" for name in names]
    assert await raw.hgetall(f"{prefix}inbox-entry:e-1") == {b"inbox": b"inbox-a", b"record": b"entry"}
    for key in keys:
        ttl = await raw.pttl(key)
        if key.endswith(":forever"):
            assert ttl == -1
        else:
            assert 3_500_000 < ttl <= 3_600_000, key


async def test_a_redis_journal_never_outlives_its_run(raw_redis: RawRedis) -> None:
    store, raw, prefix = raw_redis
    await store.put_run("run-1", "node-a", b"record", later())
    await store.append_journal("run-1", 0, b"answer")
    await store.append_journal("ended", 0, b"late")  # an answer journaled after its run was gone
    assert await raw.exists(f"{prefix}journal:ended") == 0
    # Absolute expiry times: two PTTLs read a millisecond apart would differ by that millisecond.
    journal_expires = await raw.execute_command("PEXPIRETIME", f"{prefix}journal:run-1")
    assert 0 < journal_expires <= await raw.execute_command("PEXPIRETIME", f"{prefix}run:run-1")
    assert await store.journal("run-1") == {0: b"answer"}


async def test_sweeping_a_redis_store_sends_redis_nothing_however_many_runs_wait(tmp_path: Path) -> None:
    import redis.asyncio as aioredis

    from elicitkit.stores.redis import RedisStore

    server = RedisServer(tmp_path / "redis")  # its own: another test's commands would count on a shared one
    await server.start()
    store, raw = RedisStore(server.url), aioredis.Redis.from_url(server.url)
    try:
        for i in range(300):  # waiting runs, each with a journal and a question
            await store.put_run(f"run-{i}", "node-a", b"record", later())
            await store.append_journal(f"run-{i}", 0, b"answer")
            await store.put_question(f"q-{i}", f"run-{i}", b"question", later())
        before = int((await raw.info("stats"))["total_commands_processed"])
        assert await store.sweep() == 0
        after = int((await raw.info("stats"))["total_commands_processed"])
        # Only the INFO that read the count: it used to run a script for each run's journal and questions.
        assert after - before == 1
    finally:
        await raw.aclose()
        await store.aclose()
        await server.stop()


async def test_the_redis_run_questions_index_lives_as_long_as_its_longest_question(raw_redis: RawRedis) -> None:
    store, raw, prefix = raw_redis
    index = f"{prefix}run-questions:run-1"
    await store.put_question("q-long", "run-1", b"long", time.time() + 7200)
    await store.put_question("q-short", "run-1", b"short", later())
    assert await raw.pttl(index) > 7_000_000

    await store.delete_question("q-long")
    await store.put_question("q-gone", "run-1", b"gone", earlier())
    assert await store.run_questions("run-1") == {"q-short": b"short"}  # reading it forgets the dead id
    assert await raw.smembers(index) == {b"q-short"}


async def test_a_redis_inbox_index_forgets_dead_ids_when_read(raw_redis: RawRedis) -> None:
    store, raw, prefix = raw_redis
    index = f"{prefix}inbox:inbox-a"
    await store.put_inbox_entry("inbox-a", "e-live", b"live", later())
    await store.put_inbox_entry("inbox-a", "e-gone", b"gone", earlier())
    assert await raw.smembers(index) == {b"e-live", b"e-gone"}

    assert await store.inbox_entries("inbox-a") == {"e-live": b"live"}  # reading it forgets the dead id
    assert await raw.smembers(index) == {b"e-live"}


async def test_the_redis_store_and_a_listener_carry_on_when_redis_crashes_and_comes_back(tmp_path: Path) -> None:
    from elicitkit.stores.redis import RedisBroker, RedisStore

    server = RedisServer(tmp_path / "redis")
    await server.start()
    url = server.url
    store, broker = RedisStore(url), RedisBroker(url)
    try:
        await store.put_run("run-1", "node-a", b"record", later())
        async with broker.listen("node-a") as messages:
            assert await broker.publish("node-a", b"before") == 1
            with anyio.fail_after(5):
                assert await anext(messages) == b"before"

            await server.kill()
            await server.start()
            assert server.url == url

            # Not persistent: the run is gone, but the pooled connections work again at once.
            assert await store.get_run("run-1") is None
            await store.put_run("run-1", "node-a", b"again", later())
            assert await store.get_run("run-1") == ("node-a", b"again")

            received: list[bytes] = []
            async with anyio.create_task_group() as tg:

                async def read() -> None:
                    received.append(await anext(messages))

                tg.start_soon(read)
                with anyio.fail_after(5):
                    # The read fails, the listener reconnects and subscribes again, and says so.
                    await messages.resubscribed.wait()  # type: ignore[attr-defined]
                    assert await broker.publish("node-a", b"after") == 1
            assert received == [b"after"]
    finally:
        await store.aclose()
        await broker.aclose()
        await server.stop()


# Brokers


async def test_publishing_with_nobody_listening_reaches_no_one(broker: Broker) -> None:
    assert await broker.publish("node-a", b"hello") == 0


async def test_a_listener_receives_what_is_published_after_it_entered_in_order(broker: Broker) -> None:
    await broker.publish("node-a", b"before")
    async with broker.listen("node-a") as messages:
        for i in range(5):
            assert await broker.publish("node-a", f"message {i}".encode()) == 1
        received = []
        with anyio.fail_after(5):
            async for message in messages:
                received.append(message)
                if len(received) == 5:
                    break

    assert received == [f"message {i}".encode() for i in range(5)]


async def test_listeners_on_different_channels_do_not_cross(broker: Broker) -> None:
    async with broker.listen("node-a") as on_a, broker.listen("node-b") as on_b:
        assert await broker.publish("node-a", b"for a") == 1
        assert await broker.publish("node-b", b"for b") == 1
        assert await broker.publish("node-c", b"for nobody") == 0
        with anyio.fail_after(5):
            assert await anext(on_a) == b"for a"
            assert await anext(on_b) == b"for b"
        assert await broker.publish("node-a", b"again for a") == 1
        with anyio.fail_after(5):
            assert await anext(on_a) == b"again for a"


async def test_every_listener_on_a_channel_receives_each_message(broker: Broker) -> None:
    async with broker.listen("node-a") as first, broker.listen("node-a") as second:
        assert await broker.publish("node-a", b"to both") == 2
        with anyio.fail_after(5):
            assert await anext(first) == b"to both"
            assert await anext(second) == b"to both"


async def test_a_closed_listener_stops_receiving(broker: Broker) -> None:
    async with broker.listen("node-a"):
        pass
    async with broker.listen("node-b"):
        assert await broker.publish("node-a", b"after") == 0


async def test_each_listener_after_another_hears_only_what_is_published_to_its_own_channel(broker: Broker) -> None:
    # A listener follows one that ended (a broker may hand the next one the same connection): nothing of the
    # first one's channel reaches it, whether sent before the first ended or after.
    for i in range(5):
        async with broker.listen(f"reply-{i}") as messages:
            assert await broker.publish(f"reply-{i}", f"first {i}".encode()) == 1
            assert await broker.publish(f"reply-{i}", f"unread {i}".encode()) == 1
            with anyio.fail_after(5):
                assert await anext(messages) == f"first {i}".encode()
        assert await broker.publish(f"reply-{i}", b"late") == 0
    async with broker.listen("reply-next") as messages:
        assert await broker.publish("reply-0", b"to an old channel") == 0
        assert await broker.publish("reply-next", b"mine") == 1
        with anyio.fail_after(5):
            assert await anext(messages) == b"mine"


async def test_a_redis_broker_listens_again_and_again_on_the_connections_it_has(tmp_path: Path) -> None:
    # Every answer forwarded to another node listens for its reply: a new Redis connection (and its handshake)
    # each time would cost more than the exchange itself.
    from redis.asyncio import Redis

    from elicitkit.stores.redis import RedisBroker

    server = RedisServer(tmp_path / "redis")  # its own: another test's connections would count on a shared one
    await server.start()
    broker = RedisBroker(server.url)
    admin = Redis.from_url(server.url)
    try:
        async with broker.listen("warm-up"):
            pass
        before = (await admin.info("stats"))["total_connections_received"]
        for i in range(20):
            async with broker.listen(f"reply-{i}") as messages:
                assert await broker.publish(f"reply-{i}", b"reply") == 1
                with anyio.fail_after(5):
                    assert await anext(messages) == b"reply"
        assert (await admin.info("stats"))["total_connections_received"] - before <= 1  # (the publisher's, at most)
        # Connections Redis dropped while they waited for a listener (killed, or Redis restarted) are replaced.
        await admin.client_kill_filter(_type="pubsub")
        async with broker.listen("after-kill") as messages:
            assert await broker.publish("after-kill", b"still heard") == 1
            with anyio.fail_after(5):
                assert await anext(messages) == b"still heard"
        await server.kill()
        await server.start()
        async with broker.listen("after-restart") as messages:
            assert await broker.publish("after-restart", b"heard again") == 1
            with anyio.fail_after(5):
                assert await anext(messages) == b"heard again"
    finally:
        await broker.aclose()
        await admin.aclose()
        await server.stop()


async def test_a_listener_cancelled_while_waiting_stops_receiving(broker: Broker) -> None:
    entered = anyio.Event()

    async def listen() -> None:
        async with broker.listen("node-a") as messages:
            entered.set()
            async for _ in messages:
                pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(listen)
        with anyio.fail_after(5):
            await entered.wait()
        tg.cancel_scope.cancel()

    assert await broker.publish("node-a", b"after") == 0


async def test_messages_are_delivered_byte_for_byte(broker: Broker) -> None:
    async with broker.listen("node-a") as messages:
        assert await broker.publish("node-a", ODD_BYTES) == 1
        assert await broker.publish("node-a", b"") == 1
        with anyio.fail_after(5):
            assert await anext(messages) == ODD_BYTES
            assert await anext(messages) == b""
