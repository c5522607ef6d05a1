"""What a hosted run leaves in the store: its record, pending questions and journal.

Every value is sealed under the run's principal (`Sealer`, or `PlainSealer`
without a secret) with the record's id as associated data, so a record cannot
be opened by another principal or moved to another key. Only ids and
timestamps reach the store in the clear.

The journal holds, by sequence number, each answer (pinned to a digest of the
question asked) and each `step` result. Replaying a run re-executes its body;
every `elicit` or `step` whose journal entry matches returns at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from elicitkit._core.journal import Entry
from elicitkit._core.kinds import Mode, RouteName
from elicitkit._crypto import PlainSealer
from elicitkit._engine.run import Question, Run
from elicitkit._errors import TamperedRecord
from elicitkit.stores.base import RoundStore, Store

__all__ = ["Durability", "QuestionRecord", "RunRecord", "SealerLike"]


class SealerLike(Protocol):
    def seal(self, principal: str | None, plaintext: bytes, *, aad: bytes = b"") -> bytes: ...

    def open(self, principal: str | None, sealed: bytes, *, aad: bytes = b"") -> bytes: ...

    def sign(self, data: bytes) -> bytes: ...

    def verify(self, data: bytes, tag: bytes) -> bool: ...


@dataclass(frozen=True, slots=True)
class RunRecord:
    tool: str
    arguments: dict[str, Any]
    mrtr: bool


@dataclass(frozen=True, slots=True)
class QuestionRecord:
    run_id: str
    seq: int
    digest: str
    message: str
    schema: dict[str, Any]
    route: RouteName
    principal: str | None
    mode: Mode = "form"
    secret: tuple[str, ...] = ()
    observable: bool = False
    """Completed by elicitkit's own page (the client's accept only acknowledges it)."""
    via: list[Any] | None = None
    """A channel question's destination (`Via.to_json`)."""
    ref: dict[str, Any] | None = None
    """A channel question's message, as its channel identifies it."""
    node: str | None = None
    """The node that asked (a channel question of a run that is not hosted lives only there)."""
    tool: str | None = None
    hosted: bool = True
    expires_at: float = 0.0


class Durability:
    """Reads and writes the sealed records of hosted runs."""

    def __init__(self, store: Store, sealer: SealerLike, node: str) -> None:
        self.store = store
        self.sealer = sealer
        self.node = node
        # Without a secret records are stored as they are, so answers with secret fields are not journaled.
        self.plain = isinstance(sealer, PlainSealer)
        # A `RoundStore` takes a round (journal, token, answered questions) in one step. (Asked with `hasattr`: the
        # store is wrapped, and protocol checks look past a wrapper's `__getattr__` on newer Pythons.)
        self.closes_answered = hasattr(store, "take_round")
        """Taking a round also forgets its answered questions' records: nobody need delete them after."""

    def keeps(self, secret_fields: Sequence[str]) -> bool:
        """Whether an answer with these secret fields may be journaled: only when it can be sealed."""
        return not secret_fields or not self.plain

    def _seal(self, principal: str | None, value: Any, aad: str) -> bytes:
        return self.sealer.seal(principal, json.dumps(value, separators=(",", ":")).encode(), aad=aad.encode())

    def _open(self, principal: str | None, sealed: bytes, aad: str) -> Any:
        return json.loads(self.sealer.open(principal, sealed, aad=aad.encode()))

    async def save_run(self, run_id: str, principal: str | None, record: RunRecord, ttl: float) -> None:
        value = {"tool": record.tool, "arguments": record.arguments, "mrtr": record.mrtr, "p": principal}
        await self.store.put_run(run_id, self.node, self._seal(principal, value, f"run:{run_id}"), time.time() + ttl)

    async def keep_run(self, run: Run, ttl: float) -> None:
        """Write (or renew) a hosted run's record, so other requests and nodes find it; from now on its end
        deletes it."""
        await self.save_run(run.id, run.principal, RunRecord(run.tool, run.arguments, run.mrtr), ttl)
        run.stored = True

    async def load_run(self, run_id: str, principal: str | None) -> tuple[str, RunRecord] | None:
        """(owner, record), or None when unknown, expired, or sealed for another principal."""
        found = await self.store.get_run(run_id)
        if found is None:
            return None
        owner, sealed = found
        try:
            value = self._open(principal, sealed, f"run:{run_id}")
        except TamperedRecord:
            return None
        if value.get("p") != principal:  # binds the record to its principal even without a secret
            return None
        return owner, RunRecord(tool=value["tool"], arguments=value["arguments"], mrtr=value["mrtr"])

    async def save_question(self, question_id: str, record: QuestionRecord, expires_at: float) -> None:
        value = {
            "run": record.run_id,
            "seq": record.seq,
            "digest": record.digest,
            "message": record.message,
            "schema": record.schema,
            "route": record.route,
            "mode": record.mode,
            "secret": list(record.secret),
            "obs": record.observable,
            "p": record.principal,
        }
        if record.via is not None:
            value.update(
                via=record.via, ref=record.ref, node=record.node, tool=record.tool, h=record.hosted, e=expires_at
            )
        sealed = self._seal(record.principal, value, f"question:{question_id}")
        await self.store.put_question(question_id, record.run_id, sealed, expires_at)

    async def save_pending(self, run_id: str, principal: str | None, question: Question, expires_at: float) -> None:
        """Record an open question of a run, so any node can take its answer."""
        assert question.route is not None, "a question is stored once its route is chosen"
        record = QuestionRecord(
            run_id=run_id,
            seq=question.seq,
            digest=question.digest,
            message=question.message,
            schema=question.schema.wire,
            route=question.route,
            principal=principal,
            mode=question.mode,
            secret=question.secret_fields,
            observable=question.observable,
        )
        await self.save_question(question.id, record, expires_at)

    def _question(self, question_id: str, principal: str | None, sealed: bytes) -> QuestionRecord | None:
        try:
            value = self._open(principal, sealed, f"question:{question_id}")
        except TamperedRecord:
            return None
        if value.get("p") != principal:
            return None
        return QuestionRecord(
            run_id=value["run"],
            seq=value["seq"],
            digest=value["digest"],
            message=value["message"],
            schema=value["schema"],
            route=value["route"],
            principal=principal,
            mode=value.get("mode", "form"),
            secret=tuple(value.get("secret", ())),
            # Records written before "obs" existed keep the rule they were written under: any link acknowledges.
            observable=value.get("obs", value.get("mode") == "url"),
            via=value.get("via"),
            ref=value.get("ref"),
            node=value.get("node"),
            tool=value.get("tool"),
            hosted=value.get("h", True),
            expires_at=value.get("e", 0.0),
        )

    async def load_question(self, question_id: str, principal: str | None) -> QuestionRecord | None:
        found = await self.store.get_question(question_id)
        return None if found is None else self._question(question_id, principal, found[1])

    async def run_questions(self, run_id: str, principal: str | None) -> dict[str, QuestionRecord]:
        records = {}
        for question_id, sealed in (await self.store.run_questions(run_id)).items():
            record = self._question(question_id, principal, sealed)
            if record is not None:
                records[question_id] = record
        return records

    async def record(self, run_id: str, principal: str | None, seq: int, entry: Entry) -> bool:
        """Journal `entry` at `seq`; False when that sequence number already had one (first writer wins)."""
        return await self.store.append_journal(run_id, seq, self._sealed_entry(run_id, principal, seq, entry))

    def _sealed_entry(self, run_id: str, principal: str | None, seq: int, entry: Entry) -> bytes:
        value = {"k": entry.kind, "d": entry.digest, "a": entry.action, "c": entry.content, "v": entry.value}
        return self._seal(principal, value, f"journal:{run_id}:{seq}")

    async def take_round(
        self,
        run_id: str,
        principal: str | None,
        claim: str,
        ttl: float,
        entries: Mapping[int, Entry],
        answered: Sequence[str],
    ) -> set[int] | None:
        """Journal a round's answers and spend its one-time `claim` (a nonce, an elicitId) across every node.

        None when the claim was spent already; else the sequence numbers this call journaled (the others had an
        entry: first writer wins). A `RoundStore` does it in one step, and forgets the `answered` questions'
        records too; another store journals each answer, then spends the claim.
        """
        token, expires_at = _round_token(run_id, claim), time.time() + ttl
        sealed = {seq: self._sealed_entry(run_id, principal, seq, entry) for seq, entry in entries.items()}
        if self.closes_answered:
            taken: set[int] | None = await cast(RoundStore, self.store).take_round(
                run_id, token, expires_at, sealed, answered
            )
            return taken
        written = {seq for seq, entry in sealed.items() if await self.store.append_journal(run_id, seq, entry)}
        return written if await self.store.use_once(token, expires_at) else None

    async def journal(self, run_id: str, principal: str | None) -> dict[int, Entry]:
        """The run's journal. A tampered entry fails closed: it raises `TamperedRecord`."""
        entries = {}
        for seq, sealed in (await self.store.journal(run_id)).items():
            value = self._open(principal, sealed, f"journal:{run_id}:{seq}")
            entries[seq] = Entry(
                kind=value["k"], digest=value["d"], action=value["a"], content=value["c"], value=value["v"]
            )
        return entries

    async def claim_round(self, run_id: str, nonce: str, ttl: float) -> bool:
        """Use a round's one-time nonce, across every node; False when it was already used."""
        return await self.store.use_once(_round_token(run_id, nonce), time.time() + ttl)


def _round_token(run_id: str, claim: str) -> str:
    """The one-time token of a round's claim (its nonce, an elicitId, a page), the same whichever way it is spent."""
    return f"round:{run_id}:{claim}"
