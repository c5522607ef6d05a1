#!/usr/bin/env node
// A Node tool: `elicitkit ask` prints the reply as JSON and exits 0 accept, 1 decline, 2 cancel, 3 timeout.
const { spawnSync } = require("node:child_process");
const asked = spawnSync("elicitkit", ["ask", "text", "Release note?", "--min", "3"], { encoding: "utf8" });
const reply = JSON.parse(asked.stdout);
console.log(asked.status === 0 ? `note: ${reply.content.value}` : `no note (${reply.action}, exit ${asked.status})`);
