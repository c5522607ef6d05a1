"""The Lua scripts of the Redis store: each runs atomically inside Redis.

Keys are passed in KEYS where the script knows them up front; keys it finds as it goes (a run's questions)
are built from prefixes passed in ARGV, which is why the store needs a standalone Redis (or one cluster slot).
Expiries are milliseconds since the epoch, or '' for never.

FILE_RECORD, FILED_RECORDS and UNFILE_RECORD keep records filed in groups: each record a hash
{<group field>: group, record}, each group a set of record ids. Questions are filed by run (field 'run'),
web inbox entries by inbox (field 'inbox').
"""

from __future__ import annotations

__all__ = [
    "PUT_RUN",
    "CLAIM_RUN",
    "DELETE_RUN",
    "DELETE_OWNED_RUN",
    "APPEND_JOURNAL",
    "FILE_RECORD",
    "FILED_RECORDS",
    "UNFILE_RECORD",
    "TAKE_ROUND",
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

# Deletes a filed record and takes it out of its group's index; when `only_in` is given, only if filed there.
_UNFILE = """
local function unfile(key, id, field, index_prefix, only_in)
  local group = redis.call('HGET', key, field)
  if only_in and group ~= only_in then return end
  if group then redis.call('SREM', index_prefix .. group, id) end
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

# KEYS: record, its group's index. ARGV: record id, group field, group, record, expiry, index key prefix.
# Moves a record filed in another group; the index lives as long as its longest-lived record.
FILE_RECORD = (
    _EXPIRE
    + """
local previous = redis.call('HGET', KEYS[1], ARGV[2])
if previous and previous ~= ARGV[3] then redis.call('SREM', ARGV[6] .. previous, ARGV[1]) end
local indexed = redis.call('EXISTS', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3], 'record', ARGV[4])
expire(KEYS[1], ARGV[5])
redis.call('SADD', KEYS[2], ARGV[1])
if indexed == 0 or ARGV[5] == '' then
  expire(KEYS[2], ARGV[5])
else
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl >= 0 then
    local now = redis.call('TIME')
    if now[1] * 1000 + math.floor(now[2] / 1000) + ttl < tonumber(ARGV[5]) then expire(KEYS[2], ARGV[5]) end
  end
end
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

# KEYS: journal, run. Returns how many entries went with a journal whose run is gone.
DROP_ORPHAN_JOURNAL = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local entries = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1])
return entries
"""
