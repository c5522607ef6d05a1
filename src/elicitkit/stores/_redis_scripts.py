"""The Lua scripts of the Redis store: each runs atomically inside Redis.

Keys are passed in KEYS where the script knows them up front; keys it finds as it goes (a run's questions)
are built from prefixes passed in ARGV, which is why the store needs a standalone Redis (or one cluster slot).
Expiries are milliseconds since the epoch, or '' for never.
"""

from __future__ import annotations

__all__ = [
    "PUT_RUN",
    "CLAIM_RUN",
    "DELETE_RUN",
    "DELETE_OWNED_RUN",
    "APPEND_JOURNAL",
    "PUT_QUESTION",
    "RUN_QUESTIONS",
    "TAKE_ROUND",
    "DELETE_QUESTION",
    "DROP_ORPHAN_JOURNAL",
]

# Sets a key's expiry to ARGV-style milliseconds, or removes it when the value is '' (never expires).
_EXPIRE = """
local function expire(key, at)
  if at == '' then redis.call('PERSIST', key) else redis.call('PEXPIREAT', key, at) end
end
"""

# KEYS: run, journal. ARGV: owner, record, expiry. The journal shares its run's lifetime.
PUT_RUN = (
    _EXPIRE
    + """
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'record', ARGV[2])
expire(KEYS[1], ARGV[3])
expire(KEYS[2], ARGV[3])
"""
)

# KEYS: run. ARGV: expected owner, new owner.
CLAIM_RUN = """
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2])
return 1
"""

# Deletes a run, its journal, its index of questions and every question in it.
_FORGET_RUN = """
local function forget_run(run, journal, questions, question_prefix)
  for _, id in ipairs(redis.call('SMEMBERS', questions)) do redis.call('DEL', question_prefix .. id) end
  redis.call('DEL', run, journal, questions)
end
"""

# Deletes a question and takes it out of its run's index.
_FORGET_QUESTION = """
local function forget_question(key, id, questions_prefix)
  local run = redis.call('HGET', key, 'run')
  if run then redis.call('SREM', questions_prefix .. run, id) end
  redis.call('DEL', key)
end
"""

# Gives a journal that just grew its run's remaining lifetime.
_JOURNAL_LIVES_WITH_RUN = """
local function journal_lives_with_run(journal, run)
  local ttl = redis.call('PTTL', run)
  if ttl > 0 then redis.call('PEXPIRE', journal, ttl) end
end
"""

# KEYS: run, journal, run-questions. ARGV: question key prefix.
DELETE_RUN = (
    _FORGET_RUN
    + """
forget_run(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
"""
)

# KEYS: run, journal, run-questions. ARGV: question key prefix, owner. 0 (and no change) when another owns it.
DELETE_OWNED_RUN = (
    _FORGET_RUN
    + """
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[2] then return 0 end
forget_run(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
return 1
"""
)

# KEYS: journal, run. ARGV: seq, entry.
APPEND_JOURNAL = (
    _JOURNAL_LIVES_WITH_RUN
    + """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
journal_lives_with_run(KEYS[1], KEYS[2])
return 1
"""
)

# KEYS: question, run-questions. ARGV: question id, run id, record, expiry, run-questions key prefix.
PUT_QUESTION = (
    _EXPIRE
    + """
local previous = redis.call('HGET', KEYS[1], 'run')
if previous and previous ~= ARGV[2] then redis.call('SREM', ARGV[5] .. previous, ARGV[1]) end
local indexed = redis.call('EXISTS', KEYS[2])
redis.call('HSET', KEYS[1], 'run', ARGV[2], 'record', ARGV[3])
expire(KEYS[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[1])
if indexed == 0 or ARGV[4] == '' then
  expire(KEYS[2], ARGV[4])
else
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl >= 0 then
    local now = redis.call('TIME')
    if now[1] * 1000 + math.floor(now[2] / 1000) + ttl < tonumber(ARGV[4]) then expire(KEYS[2], ARGV[4]) end
  end
end
"""
)

# KEYS: run-questions. ARGV: question key prefix, run id. Returns [id, record, ...]; forgets ids that died.
RUN_QUESTIONS = """
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local question = redis.call('HMGET', ARGV[1] .. id, 'run', 'record')
  if question[1] == ARGV[2] then
    found[#found + 1] = id
    found[#found + 1] = question[2]
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return found
"""

# KEYS: once token, journal, run. ARGV: token expiry (ms, '' for never), question key prefix, run-questions key prefix,
# how many entries, then seq, entry pairs, then the answered question ids. Returns the seqs newly recorded,
# or -1 (and no change) when the token was spent already.
TAKE_ROUND = (
    _FORGET_QUESTION
    + _JOURNAL_LIVES_WITH_RUN
    + """
local spent
if ARGV[1] == '' then spent = redis.call('SET', KEYS[1], '1', 'NX')
else spent = redis.call('SET', KEYS[1], '1', 'NX', 'PXAT', ARGV[1]) end
if not spent then return -1 end
local count = tonumber(ARGV[4])
local written = {}
for i = 0, count - 1 do
  local seq, entry = ARGV[5 + 2 * i], ARGV[6 + 2 * i]
  if redis.call('HSETNX', KEYS[2], seq, entry) == 1 then written[#written + 1] = seq end
end
if #written > 0 then journal_lives_with_run(KEYS[2], KEYS[3]) end
for i = 5 + 2 * count, #ARGV do forget_question(ARGV[2] .. ARGV[i], ARGV[i], ARGV[3]) end
return written
"""
)

# KEYS: question. ARGV: run-questions key prefix, question id.
DELETE_QUESTION = (
    _FORGET_QUESTION
    + """
forget_question(KEYS[1], ARGV[2], ARGV[1])
"""
)

# KEYS: journal, run. Returns how many entries went with a journal whose run is gone.
DROP_ORPHAN_JOURNAL = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local entries = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1])
return entries
"""
