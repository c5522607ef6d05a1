"""The decisions elicitkit makes, without IO: no event loop, no SDK, no store.

`kinds` names the states and the wire words, `codec` builds and reads
elicitkit's `requestState`, `journal` decides when a journaled answer may be
reused, `rounds` guards the one-time retry nonce. The engine (`_engine/`)
performs the IO around these decisions.
"""
