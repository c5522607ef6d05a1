"""What elicitkit keeps in the store, each kind of record with its own named operations.

- **runs**: a hosted run's tool, arguments and era, with the node that owns it;
- **questions**: a run's open questions (sealed with what a page or another node needs to take their answer);
- **the journal**: by position, each answer (pinned to the digest of the question asked) and each `step` result;
- **claims**: the one-time tokens an answer spends (named in `_core/once.py`), and the one-time binding of a
  page link to the first browser that opens it;
- **tasks**: an MCP task's status and outcome;
- **the inbox index**: the open questions each person's web inbox shows.

Ids that arrive from outside (a retry's run, an `elicitId`, a task id) are checked to be elicitkit ids (`is_id`)
before any store is asked: anything else is unknown. Every value is sealed under its principal (`Sealer`, or
`PlainSealer` without a secret) with the record's key as associated data, and carries the principal it belongs to:
a record opens only for the caller it belongs to (`_opened`, the one ownership check). Only ids and timestamps
reach the store in the clear.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from elicitkit._core.journal import Entry
from elicitkit._core.jsontext import compact
from elicitkit._core.kinds import is_id
from elicitkit._core.once import Claim, link_binding, spent_token
from elicitkit._crypto import PlainSealer, SealerLike
from elicitkit._engine.question import Question
from elicitkit._engine.recorded import QuestionRecord, RunRecord
from elicitkit._engine.run import Run
from elicitkit._errors import TamperedRecord
from elicitkit.stores.base import FencedStore, FirstRoundStore, RoundStore, Store

__all__ = ["QuestionRecord", "Records", "RunRecord"]


class Records:
    """Reads and writes the sealed records; the one place that knows their keys and shapes."""

    def __init__(self, store: Store, sealer: SealerLike, node: str) -> None:
        self.store = store
        self.sealer = sealer
        self.node = node
        # Without a secret records are stored as they are, so answers with secret fields are not journaled.
        self.plain = isinstance(sealer, PlainSealer)
        # Optional store powers, asked with `hasattr`: the store is wrapped, and protocol checks look past a
        # wrapper's `__getattr__` on newer Pythons.
        self.closes_answered = hasattr(store, "take_round")
        """Taking a round also forgets its answered questions' records: nobody need delete them after."""
        self._fenced = hasattr(store, "delete_owned_run")
        self._puts_fenced = hasattr(store, "put_owned_run")
        self._first_rounds = hasattr(store, "put_run_with_question")

    def keeps(self, secret_fields: Sequence[str]) -> bool:
        """Whether an answer with these secret fields may be journaled: only when it can be sealed."""
        return not secret_fields or not self.plain

    # -- sealing, and the one ownership check --------------------------------------------

    def _seal(
        self, principal: str | None, value: dict[str, Any], aad: str, *, owned: bool = True, encoded: str = ""
    ) -> bytes:
        """Seal `value` (a dict the caller built for this: an owned record gets its principal added); after its
        own members (at least one) come the `encoded` ones, serialised already (`"name":<json>`: a shared schema)."""
        if owned:
            value["p"] = principal
        text = compact(value)
        if encoded:
            text = f"{text[:-1]},{encoded}}}"
        return self.sealer.seal(principal, text.encode(), aad=aad.encode())

    def _opened(self, principal: str | None, sealed: bytes, aad: str, *, owned: bool = True) -> dict[str, Any] | None:
        """The record's value when it belongs to `principal`; None when sealed for another or altered.

        `owned` records name their principal inside, which binds them to it even without a secret; journal
        entries do not (they are read only through their run's record, which does).
        """
        try:
            value: dict[str, Any] = json.loads(self.sealer.open(principal, sealed, aad=aad.encode()))
        except (TamperedRecord, ValueError):
            return None
        if owned and value.pop("p", None) != principal:
            return None
        return value

    # -- runs ------------------------------------------------------------------------------

    def _sealed_run(self, run_id: str, principal: str | None, record: RunRecord) -> bytes:
        value = {"tool": record.tool, "arguments": record.arguments, "mrtr": record.mrtr}
        return self._seal(principal, value, f"run:{run_id}")

    async def save_run(self, run_id: str, principal: str | None, record: RunRecord, ttl: float) -> None:
        await self.store.put_run(run_id, self.node, self._sealed_run(run_id, principal, record), time.time() + ttl)

    async def keep_run(self, run: Run, ttl: float, *, fenced: bool = False) -> str | None:
        """Write (or renew) a hosted run's record, so other requests and nodes find it; from now on its end
        deletes it. Its tool, arguments and era never change, and a node seals with one key for its whole life
        (a rotated secret takes a restart): it is sealed once, and renewals write those bytes.

        `fenced`: only while no other node owns the run (one that took it over); else nothing is written and the
        answer is that node's id. None: written.
        """
        until = time.time() + ttl
        record = self._run_record(run)
        if not fenced:
            await self.store.put_run(run.id, self.node, record, until)
        elif self._puts_fenced:  # one step, fenced by the store
            other = await cast(FencedStore, self.store).put_owned_run(run.id, self.node, record, until)
            if other is not None:
                return other
        else:
            other = await self.owner_of(run.id)
            if other is not None and other != self.node:
                return other
            await self.store.put_run(run.id, self.node, record, until)
        run.mark_stored(until)
        return None

    def _run_record(self, run: Run) -> bytes:
        """The run's sealed record, sealed once: its tool, arguments and era never change."""
        if run.record is None:
            run.record = self._sealed_run(run.id, run.principal, RunRecord(run.tool, run.arguments, run.mrtr))
        return run.record

    async def load_run(self, run_id: str, principal: str | None) -> tuple[str, RunRecord] | None:
        """(owner, record), or None when unknown, expired, or someone else's."""
        if not is_id(run_id):
            return None
        found = await self.store.get_run(run_id)
        if found is None:
            return None
        owner, sealed = found
        value = self._opened(principal, sealed, f"run:{run_id}")
        if value is None:
            return None
        return owner, RunRecord(tool=value["tool"], arguments=value["arguments"], mrtr=value["mrtr"])

    async def owner_of(self, run_id: str) -> str | None:
        if not is_id(run_id):
            return None
        found = await self.store.get_run(run_id)
        return None if found is None else found[0]

    async def claim_run(self, run_id: str, owner: str) -> bool:
        """Take the run over from `owner` (this node already owning it counts)."""
        return owner == self.node or await self.store.claim_run(run_id, owner, self.node)

    async def forget_run(self, run_id: str) -> None:
        """Delete a finished run's records, unless another node has taken the run over."""
        if self._fenced:
            await cast(FencedStore, self.store).delete_owned_run(run_id, self.node)  # fenced by the store
            return
        if await self.owner_of(run_id) in (None, self.node):
            await self.store.delete_run(run_id)

    # -- questions -------------------------------------------------------------------------

    async def save_question(
        self,
        run: Run,
        question_id: str,
        record: QuestionRecord,
        expires_at: float,
        *,
        schema_text: str | None = None,
        run_ttl: float | None = None,
    ) -> None:
        """Record a question of `run` (which counts it before the write, which may land even when its reply is lost).
        `schema_text`: `record.schema` already serialised (`FormSchema.wire_text`), when the caller has it.
        `run_ttl`: the run is recorded too, for that many seconds (its first round: in the same step, where the
        store can)."""
        value: dict[str, Any] = {
            "run": record.run_id,
            "seq": record.seq,
            "digest": record.digest,
            "message": record.message,
            "route": record.route,
            "mode": record.mode,
            "secret": list(record.secret),
            "obs": record.observable,
            "cp": record.content_private,
        }
        if record.via is not None:
            value.update(
                via=record.via, ref=record.ref, node=record.node, tool=record.tool, h=record.hosted, e=expires_at
            )
        encoded = ""
        if schema_text is None:
            value["schema"] = record.schema
        else:
            encoded = f'"schema":{schema_text}'
        sealed = self._seal(record.principal, value, f"question:{question_id}", encoded=encoded)
        run.wrote_record(question_id)
        if run_ttl is None:
            await self.store.put_question(question_id, record.run_id, sealed, expires_at)
        elif self._first_rounds:
            until = time.time() + run_ttl
            store = cast(FirstRoundStore, self.store)
            await store.put_run_with_question(
                run.id, self.node, self._run_record(run), until, question_id, sealed, expires_at
            )
            run.mark_stored(until)
        else:
            await self.store.put_question(question_id, record.run_id, sealed, expires_at)
            await self.keep_run(run, run_ttl)

    async def save_pending(self, run: Run, question: Question, expires_at: float, run_ttl: float | None = None) -> None:
        """Record an open question of a hosted run, so any node can take its answer (`run_ttl`: and the run, for
        that many seconds: see `save_question`)."""
        assert question.route is not None, "a question is stored once its route is chosen"
        record = QuestionRecord(
            run_id=run.id,
            seq=question.seq,
            digest=question.digest,
            message=question.message,
            schema=question.schema.wire,
            route=question.route,
            principal=run.principal,
            mode=question.mode,
            secret=question.secret_fields,
            observable=question.observable,
            content_private=question.asked.content_private,
        )
        schema_text = question.schema.wire_text()
        await self.save_question(run, question.id, record, expires_at, schema_text=schema_text, run_ttl=run_ttl)

    def _question(self, question_id: str, principal: str | None, sealed: bytes) -> QuestionRecord | None:
        value = self._opened(principal, sealed, f"question:{question_id}")
        if value is None:
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
            content_private=value.get("cp", False),
            via=value.get("via"),
            ref=value.get("ref"),
            node=value.get("node"),
            tool=value.get("tool"),
            hosted=value.get("h", True),
            expires_at=value.get("e", 0.0),
        )

    async def load_question(self, question_id: str, principal: str | None) -> QuestionRecord | None:
        if not is_id(question_id):
            return None
        found = await self.store.get_question(question_id)
        return None if found is None else self._question(question_id, principal, found[1])

    async def run_questions(self, run_id: str, principal: str | None) -> dict[str, QuestionRecord]:
        if not is_id(run_id):
            return {}
        records = {}
        for question_id, sealed in (await self.store.run_questions(run_id)).items():
            record = self._question(question_id, principal, sealed)
            if record is not None:
                records[question_id] = record
        return records

    async def delete_question(self, question_id: str, run: Run | None = None) -> None:
        await self.store.delete_question(question_id)
        if run is not None:
            run.records_gone((question_id,))

    async def keep_finished_run(self, run: Run, ttl: float, *, fenced: bool = False) -> str | None:
        """Keep a finished run's record and journal `ttl` seconds more (for a resend of its last retry); its
        questions go now, so none of their pages or callbacks takes an answer (if it may still hold any).

        `fenced`: as for `keep_run`; a run another node owns now is left to it, questions and all (that node's id
        is the answer).

        A record this node wrote to last that long already (most runs end well within their first write's time)
        is left as it is, with nothing to fence: no write, and no other node's record touched."""
        if not run.may_have_question_records and run.stored_until >= time.time() + ttl:
            return None
        other = await self.keep_run(run, ttl, fenced=fenced)
        if other is None and run.may_have_question_records:
            for question_id in await self.store.run_questions(run.id):
                await self.store.delete_question(question_id)
        return other

    # -- the journal, and the claims that take answers once --------------------------------

    def _sealed_entry(self, run_id: str, principal: str | None, seq: int, entry: Entry) -> bytes:
        value = {"k": entry.kind, "d": entry.digest, "a": entry.action, "c": entry.content, "v": entry.value}
        if entry.reason is not None:
            value["r"] = entry.reason
        if entry.meta is not None:
            value["m"] = entry.meta
        return self._seal(principal, value, f"journal:{run_id}:{seq}", owned=False)

    async def record(self, run_id: str, principal: str | None, seq: int, entry: Entry) -> bool:
        """Journal `entry` at `seq`; False when that position already had one (the first writer wins)."""
        return await self.store.append_journal(run_id, seq, self._sealed_entry(run_id, principal, seq, entry))

    async def journal(self, run_id: str, principal: str | None) -> dict[int, Entry]:
        """The run's journal. A tampered entry fails closed: it raises `TamperedRecord`."""
        entries = {}
        for seq, sealed in (await self.store.journal(run_id)).items():
            value = self._opened(principal, sealed, f"journal:{run_id}:{seq}", owned=False)
            if value is None:
                raise TamperedRecord(f"journal entry {seq} of run {run_id} failed authentication")
            entries[seq] = Entry(
                kind=value["k"],
                digest=value["d"],
                action=value["a"],
                content=value["c"],
                value=value["v"],
                reason=value.get("r"),
                meta=value.get("m"),
            )
        return entries

    async def take(
        self,
        run_id: str,
        principal: str | None,
        claim: Claim | None,
        ttl: float,
        entries: Mapping[int, Entry],
        answered: Sequence[str],
        value: bytes = b"1",
    ) -> set[int] | None:
        """Journal answers and spend their `claim` once across every node.

        None when the claim was spent already (nothing changes); else the positions this call journaled (the
        others had an entry: the first writer wins). A `RoundStore` does it in one step and forgets the
        `answered` questions' records too; another store journals each answer, then spends the claim. Without a
        claim (the journal's first write is the once), only the entries are written. The claim remembers `value`
        (what spent it), which `spent_with` reads back.
        """
        sealed = {seq: self._sealed_entry(run_id, principal, seq, entry) for seq, entry in entries.items()}
        if claim is None:
            return {seq for seq, one in sealed.items() if await self.store.append_journal(run_id, seq, one)}
        token, expires_at = spent_token(run_id, claim), time.time() + ttl
        if self.closes_answered:
            taken: set[int] | None = await cast(RoundStore, self.store).take_round(
                run_id, token, expires_at, sealed, answered, value
            )
            return taken
        written = {seq for seq, one in sealed.items() if await self.store.append_journal(run_id, seq, one)}
        return written if await self.store.use_once(token, expires_at, value) else None

    async def spent_with(self, run_id: str, claim: Claim) -> bytes | None:
        """What spent `claim` (the `value` given to `take`), while the store remembers it."""
        if not is_id(run_id):
            return None
        return await self.store.spent(spent_token(run_id, claim))

    async def bind_link(self, question_id: str, holder: tuple[str, str] | None, expires_at: float) -> bool:
        """Bind a question's page link (`holder`'s own, for an approver) to a browser: True only the first time,
        across every node; remembered until the link expires."""
        return await self.store.use_once(link_binding(question_id, holder), expires_at)

    # -- tasks -----------------------------------------------------------------------------

    async def save_task(self, run_id: str, principal: str | None, value: dict[str, Any], expires_at: float) -> None:
        await self.store.put_task(run_id, self._seal(principal, dict(value), f"task:{run_id}"), expires_at)

    async def load_task(self, run_id: str, principal: str | None) -> dict[str, Any] | None:
        if not is_id(run_id):
            return None
        sealed = await self.store.get_task(run_id)
        return None if sealed is None else self._opened(principal, sealed, f"task:{run_id}")

    # -- the inbox index -------------------------------------------------------------------

    @staticmethod
    def inbox_of(principal: str) -> str:
        """The inbox's name in the store: a digest, so the principal itself is never stored in the clear."""
        return hashlib.sha256(principal.encode("utf-8", "surrogatepass")).hexdigest()

    async def file_in_inbox(self, principal: str, entry_id: str, value: dict[str, Any], expires_at: float) -> None:
        sealed = self._seal(principal, dict(value), f"inbox:{entry_id}")
        await self.store.put_inbox_entry(self.inbox_of(principal), entry_id, sealed, expires_at)

    async def inbox(self, principal: str) -> dict[str, dict[str, Any] | None]:
        """The entries of `principal`'s inbox, by id (None for one that cannot be opened: another secret, altered)."""
        entries = await self.store.inbox_entries(self.inbox_of(principal))
        return {entry_id: self._opened(principal, sealed, f"inbox:{entry_id}") for entry_id, sealed in entries.items()}

    async def unfile(self, principal: str, entry_id: str) -> None:
        await self.store.delete_inbox_entry(self.inbox_of(principal), entry_id)
