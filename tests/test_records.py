"""The sealed records' shapes: what a question or a run record reads back as, whoever wrote it."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

from elicitkit._crypto import PlainSealer, Sealer
from elicitkit._engine.records import QuestionRecord, Records, RunRecord
from elicitkit._engine.run import Run
from elicitkit._schema.compile import compile_schema
from elicitkit.stores.memory import MemoryStore

pytestmark = pytest.mark.anyio


class Release(BaseModel):
    zone: str  # written first, sorts last: its place in the form must survive the store
    approve: bool


SEALERS = [PlainSealer(), Sealer(["records-secret-0123456789abcdef01234567"])]


@pytest.mark.parametrize("sealer", SEALERS, ids=["plain", "sealed"])
async def test_a_question_record_reads_back_with_its_fields_in_the_order_the_tool_wrote_them(sealer: object) -> None:
    records = Records(MemoryStore(), sealer, "node-a")  # type: ignore[arg-type]
    schema = compile_schema(Release)
    record = QuestionRecord("run-1", 1, "d" * 32, "Release?", schema.wire, "mrtr", "alice")
    expires = time.time() + 60
    # With the schema serialised once per schema (what a hosted question's record uses), and without.
    run = Run("run-1", "release", "alice", mrtr=True)
    await records.save_question(run, "q-1", record, expires, schema_text=schema.wire_text())
    await records.save_question(run, "q-2", record, expires)
    first, second = await records.load_question("q-1", "alice"), await records.load_question("q-2", "alice")
    assert first == second == record
    assert run.question_records == {"q-1", "q-2"}  # its end asks the store for them
    assert first is not None and list(first.schema["properties"]) == ["zone", "approve"]
    assert await records.load_question("q-1", "mallory") is None  # still bound to its principal


@pytest.mark.parametrize("sealer", SEALERS, ids=["plain", "sealed"])
async def test_a_run_record_renewed_reads_back_the_same_and_lives_longer(sealer: object) -> None:
    store = MemoryStore()
    records = Records(store, sealer, "node-a")  # type: ignore[arg-type]
    run = Run("run-1", "deploy", "alice", mrtr=True, arguments={"version": "2.1"})
    await records.keep_run(run, 60)
    first_until = run.stored_until
    await records.keep_run(run, 600)
    assert run.stored_until > first_until + 500
    assert await records.load_run("run-1", "alice") == ("node-a", RunRecord("deploy", {"version": "2.1"}, True))
    assert await records.load_run("run-1", "mallory") is None
