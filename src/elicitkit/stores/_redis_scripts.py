"""The Lua scripts of the Redis store: each runs atomically inside Redis.

On a standalone Redis, keys are passed in KEYS where the script knows them up front; keys it finds as it goes
(a run's questions) are built from prefixes passed in ARGV. The CLUSTER_ scripts, for Redis Cluster, touch only
the keys in KEYS, all in one slot. Expiries are milliseconds since the epoch, or '' for never.

FILE_RECORD, FILED_RECORDS and UNFILE_RECORD keep records filed in groups: each record a hash
{<group field>: group, record}, each group a set of record ids. Questions are filed by run (field 'run'),
web inbox entries by inbox (field 'inbox').
"""

from __future__ import annotations

__all__ = [
    "PUT_RUN",
    "PUT_OWNED_RUN",
    "PUT_RUN_WITH_QUESTION",
    "CLAIM_RUN",
    "DELETE_RUN",
    "DELETE_OWNED_RUN",
    "APPEND_JOURNAL",
    "FILE_RECORD",
    "FILED_RECORDS",
    "UNFILE_RECORD",
    "TAKE_ROUND",
    "CLUSTER_DELETE_RUN",
    "CLUSTER_TAKE_ROUND",
    "CLUSTER_PUT_FILED",
    "CLUSTER_INDEX",
    "CLUSTER_UNFILE",
]

# Sets a key's expiry to ARGV-style milliseconds, or removes it when the value is '' (never expires).
_EXPIRE = """
local function expire(key, at)
  if at == '' then redis.call('PERSIST', key) else redis.call('PEXPIREAT', key, at) end
end
"""

# KEYS: run, journal. ARGV: owner, record, expiry. The journal shares its run's lifetime.
_PUT_RUN = """
local function put_run(run, journal, owner, record, at)
  redis.call('HSET', run, 'owner', owner, 'record', record)
  expire(run, at)
  expire(journal, at)
end
"""

PUT_RUN = _EXPIRE + _PUT_RUN + "put_run(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])\n"

# KEYS: run, journal. ARGV: owner, record, expiry. Another node's live run is left as it is: its owner is returned.
PUT_OWNED_RUN = (
    _EXPIRE
    + _PUT_RUN
    + """
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[1] then return owner end
put_run(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
return false
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

# Deletes a filed record and takes it out of its group's index; when `only_in` is given, only if filed there.
_UNFILE = """
local function unfile(key, id, field, index_prefix, only_in)
  local group = redis.call('HGET', key, field)
  if only_in and group ~= only_in then return end
  if group then redis.call('SREM', index_prefix .. group, id) end
  redis.call('DEL', key)
end
"""

# Gives a journal that just grew its run's remaining lifetime; a journal written for a run that is gone (it ended
# or expired meanwhile) goes at once, as nothing will read it: no journal outlives its run.
_JOURNAL_LIVES_WITH_RUN = """
local function journal_lives_with_run(journal, run)
  local ttl = redis.call('PTTL', run)
  if ttl > 0 then redis.call('PEXPIRE', journal, ttl)
  elseif ttl == -2 then redis.call('DEL', journal) end
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

# KEYS: record, its group's index. ARGV: record id, group field, group, record, expiry, index key prefix.
# Moves a record filed in another group; the index lives as long as its longest-lived record.
_FILE = """
local function file(key, index, id, field, group, record, at, index_prefix)
  local previous = redis.call('HGET', key, field)
  if previous and previous ~= group then redis.call('SREM', index_prefix .. previous, id) end
  local indexed = redis.call('EXISTS', index)
  redis.call('HSET', key, field, group, 'record', record)
  expire(key, at)
  redis.call('SADD', index, id)
  if indexed == 0 or at == '' then
    expire(index, at)
  else
    local ttl = redis.call('PTTL', index)
    if ttl >= 0 then
      local now = redis.call('TIME')
      if now[1] * 1000 + math.floor(now[2] / 1000) + ttl < tonumber(at) then expire(index, at) end
    end
  end
end
"""

FILE_RECORD = _EXPIRE + _FILE + "file(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])\n"

# KEYS: run, journal, question record, the run's question index. ARGV: owner, run record, run expiry, then
# FILE_RECORD's for the question. A run and its first question, in one step (not on a cluster: other slots).
PUT_RUN_WITH_QUESTION = (
    _EXPIRE
    + _PUT_RUN
    + _FILE
    + """
put_run(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
file(KEYS[3], KEYS[4], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
"""
)

# KEYS: a group's index. ARGV: record key prefix, group field, group. Returns [id, record, ...]; forgets ids
# that died or moved to another group.
FILED_RECORDS = """
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local filed = redis.call('HMGET', ARGV[1] .. id, ARGV[2], 'record')
  if filed[1] == ARGV[3] then
    found[#found + 1] = id
    found[#found + 1] = filed[2]
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return found
"""

# KEYS: once token, journal, run. ARGV: token expiry (ms, '' for never), token value, question key prefix,
# run-questions key prefix, how many entries, then seq, entry pairs, then the answered question ids. Returns the
# seqs newly recorded, or -1 (and no change) when the token was spent already.
TAKE_ROUND = (
    _UNFILE
    + _JOURNAL_LIVES_WITH_RUN
    + """
local spent
if ARGV[1] == '' then spent = redis.call('SET', KEYS[1], ARGV[2], 'NX')
else spent = redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PXAT', ARGV[1]) end
if not spent then return -1 end
local count = tonumber(ARGV[5])
local written = {}
for i = 0, count - 1 do
  local seq, entry = ARGV[6 + 2 * i], ARGV[7 + 2 * i]
  if redis.call('HSETNX', KEYS[2], seq, entry) == 1 then written[#written + 1] = seq end
end
if #written > 0 then journal_lives_with_run(KEYS[2], KEYS[3]) end
for i = 6 + 2 * count, #ARGV do unfile(ARGV[3] .. ARGV[i], ARGV[i], 'run', ARGV[4]) end
return written
"""
)

# KEYS: record. ARGV: index key prefix, group field, record id, and optionally the group it must be filed in.
UNFILE_RECORD = (
    _UNFILE
    + """
unfile(KEYS[1], ARGV[3], ARGV[2], ARGV[1], ARGV[4])
"""
)

# -- Redis Cluster ---------------------------------------------------------------------------------------------
# On a cluster a script may only touch keys it is given in KEYS, all in one slot. A run's keys (run, journal,
# run-questions) and its round tokens share the run's hash tag; a question or inbox entry is in a slot of its
# own, so filing one is a step on the record and a step on its group's index, in that order (a record not yet
# in its index is not listed; an id whose record is gone or moved is forgotten when the index is read).

# KEYS: run, journal, run-questions. ARGV: the owner it must have, or '' for any. Deletes the three keys and
# returns the ids of the run's questions (whose records the caller deletes next); false when another owns it.
CLUSTER_DELETE_RUN = """
if ARGV[1] ~= '' then
  local owner = redis.call('HGET', KEYS[1], 'owner')
  if owner and owner ~= ARGV[1] then return false end
end
local ids = redis.call('SMEMBERS', KEYS[3])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return ids
"""

# KEYS: once token, journal, run, run-questions. ARGV: token expiry (ms, '' for never), token value, how many
# entries, then seq, entry pairs, then the answered question ids, which leave the run's index (the caller
# deletes their records next). Returns the seqs newly recorded, or -1 (and no change) when the token was spent.
CLUSTER_TAKE_ROUND = (
    _JOURNAL_LIVES_WITH_RUN
    + """
local spent
if ARGV[1] == '' then spent = redis.call('SET', KEYS[1], ARGV[2], 'NX')
else spent = redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PXAT', ARGV[1]) end
if not spent then return -1 end
local count = tonumber(ARGV[3])
local written = {}
for i = 0, count - 1 do
  local seq, entry = ARGV[4 + 2 * i], ARGV[5 + 2 * i]
  if redis.call('HSETNX', KEYS[2], seq, entry) == 1 then written[#written + 1] = seq end
end
if #written > 0 then journal_lives_with_run(KEYS[2], KEYS[3]) end
for i = 4 + 2 * count, #ARGV do redis.call('SREM', KEYS[4], ARGV[i]) end
return written
"""
)

# KEYS: record. ARGV: group field, group, record, expiry. Returns the group it was filed in before, or false.
CLUSTER_PUT_FILED = (
    _EXPIRE
    + """
local previous = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], 'record', ARGV[3])
expire(KEYS[1], ARGV[4])
return previous
"""
)

# KEYS: a group's index. ARGV: record id, expiry. The index lives as long as its longest-lived record.
CLUSTER_INDEX = (
    _EXPIRE
    + """
local indexed = redis.call('EXISTS', KEYS[1])
redis.call('SADD', KEYS[1], ARGV[1])
if indexed == 0 or ARGV[2] == '' then
  expire(KEYS[1], ARGV[2])
else
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl >= 0 then
    local now = redis.call('TIME')
    if now[1] * 1000 + math.floor(now[2] / 1000) + ttl < tonumber(ARGV[2]) then expire(KEYS[1], ARGV[2]) end
  end
end
"""
)

# KEYS: record. ARGV: group field, and optionally the group it must be filed in. Deletes it and returns the
# group it was filed in (whose index the caller updates next); false when there was none, or another group.
CLUSTER_UNFILE = """
local group = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] and group ~= ARGV[2] then return false end
redis.call('DEL', KEYS[1])
return group
"""
