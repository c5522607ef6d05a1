"""When a journaled answer or step may be reused by a replayed body."""

import hashlib
import json

import pytest

from elicitkit._core.journal import Entry, Held, canonical_schema, digest_of, held_at, reusable_answer, reusable_step
from elicitkit._core.kinds import Answer
from elicitkit._crypto import Sealer
from elicitkit._engine.arrival import Arrival
from elicitkit._engine.records import Records
from elicitkit.stores.memory import MemoryStore

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def test_the_digest_pins_message_and_schema_and_ignores_key_order() -> None:
    same = {"properties": {"ok": {"type": "boolean"}}, "type": "object"}
    assert digest_of("Deploy?", SCHEMA) == digest_of("Deploy?", same)
    assert digest_of("Deploy?", SCHEMA) != digest_of("Deploy now?", SCHEMA)
    assert digest_of("Deploy?", SCHEMA) != digest_of("Deploy?", {"type": "object", "properties": {}})


def test_an_answer_to_the_same_question_is_reused() -> None:
    digest = digest_of("Deploy?", SCHEMA)
    entry = Entry.of_answer(digest, Answer("accept", {"ok": True}))
    assert reusable_answer(entry, digest) == Answer("accept", {"ok": True})


def test_an_answer_to_a_reworded_question_is_not_reused() -> None:
    entry = Entry.of_answer(digest_of("Deploy?", SCHEMA), Answer("decline"))
    assert reusable_answer(entry, digest_of("Deploy to prod?", SCHEMA)) is None


def test_a_step_is_never_taken_for_an_answer_nor_an_answer_for_a_step() -> None:
    digest = digest_of("Deploy?", SCHEMA)
    step = Entry("step", digest, value=1)
    assert reusable_answer(step, digest) is None
    assert not reusable_step(Entry.of_answer("provision", Answer("accept")), "provision")
    assert reusable_step(Entry("step", "provision", value={"id": 7}), "provision")
    assert not reusable_step(Entry("step", "provision", value=1), "bill")
    assert not reusable_step(None, "provision")
    assert reusable_answer(None, digest) is None


def test_one_rule_says_what_a_journal_entry_means_for_a_question() -> None:
    digest = digest_of("Deploy?", SCHEMA)
    assert held_at(None, digest) is Held.EMPTY
    assert held_at(Entry.of_answer(digest, Answer("accept", {"ok": True})), digest) is Held.SAME
    assert held_at(Entry.of_answer(digest_of("Deploy now?", SCHEMA), Answer("decline")), digest) is Held.REWORDED
    assert held_at(Entry("step", "provision", value=1), digest) is Held.MOVED_ON


def test_the_digest_is_the_same_text_whether_the_schema_was_serialised_before_or_not() -> None:
    # Journals written before the schema's text was cached must still match: the digested text is unchanged.
    message = 'Déployer « v2 »?\n"quoted"'
    whole = json.dumps({"m": message, "s": SCHEMA}, sort_keys=True, separators=(",", ":"))
    expected = hashlib.sha256(whole.encode()).hexdigest()[:32]
    assert digest_of(message, SCHEMA) == expected
    assert digest_of(message, SCHEMA, canonical_schema(SCHEMA)) == expected


def test_a_declines_reason_is_journaled_with_it_and_comes_back_on_replay() -> None:
    digest = digest_of("Deploy?", SCHEMA)
    entry = Entry.of_answer(digest, Answer("decline", reason="Freeze until Monday"))
    assert reusable_answer(entry, digest) == Answer("decline", reason="Freeze until Monday")


@pytest.mark.anyio
async def test_a_declines_reason_survives_the_sealed_journal_and_the_trip_to_another_node() -> None:
    records = Records(MemoryStore(), Sealer(["journal-secret-0123456789abcdef0123"]), "a")
    said = Answer("decline", reason="Freeze until Monday")
    assert await records.record("run1", "alice", 1, Entry.of_answer(digest_of("Deploy?", SCHEMA), said))
    assert await records.record("run1", "alice", 2, Entry.of_answer(digest_of("Now?", SCHEMA), Answer("decline")))
    journal = await records.journal("run1", "alice")
    assert [journal[1].answer(), journal[2].answer()] == [said, Answer("decline")]
    arrival = Arrival("channel", "alice", {"q1": said, "q2": Answer("accept", {"ok": True})}, None)
    assert Arrival.from_wire(json.loads(json.dumps(arrival.to_wire()))).answers == arrival.answers
