// elicitkit's form inside the chat (MCP Apps). It speaks the apps' JSON-RPC over postMessage with its host:
// ui/initialize, then tool results arrive as ui/notifications/tool-result, and answers go back as tools/call of
// the server's answer tool (sendElicitationResult), whose result is the next question or the tool's own result.
// Every string from the server or the host reaches the page through textContent or a DOM property, never HTML.
(() => {
  "use strict";
  const PROTOCOL = "2026-01-26";
  const view = document.getElementById("view");
  const live = document.getElementById("live");
  const waiting = new Map();
  let nextId = 1;
  let hostCaps = {};
  let question = null;
  let sending = false;

  const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const notify = (method, params) => post({ method, params: params || {} });
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      post({ id, method, params });
    });

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && waiting.has(m.id)) {
      const pending = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) pending.reject(new Error(String((m.error && m.error.message) || "The host refused the request")));
      else pending.resolve(m.result || {});
      return;
    }
    if (typeof m.method !== "string") return;
    if (m.id !== undefined) {
      const known = m.method === "ping" || m.method === "ui/resource-teardown";
      post(known ? { id: m.id, result: {} } : { id: m.id, error: { code: -32601, message: "Method not found" } });
      return;
    }
    const params = m.params && typeof m.params === "object" ? m.params : {};
    if (m.method === "ui/notifications/tool-result") show(params);
    else if (m.method === "ui/notifications/host-context-changed") theme(params);
    else if (m.method === "ui/notifications/tool-cancelled") end("Stopped", "The tool call was cancelled.");
  });

  // -- the host's theme --------------------------------------------------------------------------------------
  function theme(context) {
    const root = document.documentElement;
    if (context.theme === "light" || context.theme === "dark") root.dataset.theme = context.theme;
    const vars = context.styles && context.styles.variables;
    if (vars && typeof vars === "object") {
      for (const [key, value] of Object.entries(vars)) {
        if (/^--[a-z0-9-]+$/.test(key) && typeof value === "string") root.style.setProperty(key, value);
      }
    }
  }

  // -- building the page, escaped by construction -------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function say(text) {
    live.textContent = "";
    live.textContent = text;
  }

  function replace(...nodes) {
    view.replaceChildren(...nodes);
  }

  function textOf(result) {
    const blocks = Array.isArray(result.content) ? result.content : [];
    return blocks
      .filter((b) => b && b.type === "text" && typeof b.text === "string")
      .map((b) => b.text)
      .join("\n");
  }

  function pendingOf(result) {
    for (const holder of [result.structuredContent, result._meta]) {
      const p = holder && typeof holder === "object" ? holder.elicitationPending : null;
      if (p && typeof p.elicitId === "string" && typeof p.message === "string" && p.schema && typeof p.schema === "object") {
        return p;
      }
    }
    return null;
  }

  function show(result) {
    const pending = pendingOf(result);
    if (pending) return ask(pending);
    if (result.isError) return end("The tool failed", textOf(result) || "The tool reported an error.", true);
    end("Done", textOf(result));
  }

  function end(title, text, bad) {
    question = null;
    const heading = el("h1", { text: title, tabindex: "-1", id: "title" });
    replace(el("div", { class: "card" }, el("p", { class: "brand", text: "Question from the tool" }), heading,
      text ? el("p", { class: bad ? "result bad" : "result", text }) : null));
    heading.focus();
    say(title);
  }

  // -- the schema's fields ------------------------------------------------------------------------------------
  function optionsOf(prop) {
    if (!prop || typeof prop !== "object") return [];
    const titled = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : null;
    if (titled) return titled.filter((o) => o && "const" in o).map((o) => [String(o.const), String(o.title ?? o.const)]);
    if (Array.isArray(prop.enum)) {
      const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
      return prop.enum.map((v, i) => [String(v), String(names[i] ?? v)]);
    }
    return [];
  }

  const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

  function fieldOf(name, prop, required, index) {
    const f = { name, prop, required, id: `f${index}`, label: String(prop.title || name), kind: prop.type || "string" };
    f.options = f.kind === "array" ? optionsOf(prop.items) : optionsOf(prop);
    f.defaulted = "default" in prop;
    if (f.kind === "boolean") f.control = f.defaulted ? "check" : "yesno";
    else if (f.kind === "array") f.control = "multi";
    else if (f.options.length) f.control = f.options.length <= 5 ? "radios" : "select";
    else f.control = "input";
    return f;
  }

  function hintOf(f) {
    const parts = [];
    if (f.prop.description) parts.push(String(f.prop.description));
    if (f.control === "multi") {
      const b = [];
      if (Number.isInteger(f.prop.minItems)) b.push(`at least ${f.prop.minItems}`);
      if (Number.isInteger(f.prop.maxItems)) b.push(`at most ${f.prop.maxItems}`);
      if (b.length) parts.push(`Choose ${b.join(" and ")}.`);
    }
    return parts.join(" ");
  }

  function choice(f, type, value, title, i, checked) {
    const id = i === 0 ? f.id : `${f.id}-${i}`;
    const input = el("input", { type, id, name: f.id, value, checked, required: type === "radio" && f.required });
    input.checked = Boolean(checked);
    return el("div", { class: "check" }, input, el("label", { for: id, text: title }));
  }

  function renderField(f) {
    const hint = hintOf(f);
    const hintId = hint ? `${f.id}-hint` : null;
    f.errorNode = el("p", { class: "error-message", id: `${f.id}-error`, hidden: true });
    const notes = [hint ? el("p", { class: "hint", id: hintId, text: hint }) : null, f.errorNode];
    const optional = f.required ? null : el("span", { class: "optional", text: " (optional)" });
    const dflt = f.prop.default;
    let box;
    if (f.control === "check") {
      const input = el("input", { type: "checkbox", id: f.id, name: f.id, "aria-describedby": hintId });
      input.checked = dflt === true;
      box = el("div", { class: "field" }, el("div", { class: "check" }, input, el("label", { for: f.id, text: f.label })), ...notes);
    } else if (f.control === "yesno" || f.control === "radios" || f.control === "multi") {
      const type = f.control === "multi" ? "checkbox" : "radio";
      const opts = f.control === "yesno" ? [["true", "Yes"], ["false", "No"]] : f.options;
      const chosen = f.control === "multi" ? (Array.isArray(dflt) ? dflt.map(String) : []) : dflt === undefined ? [] : [String(dflt)];
      const list = el("div", { class: f.control === "yesno" ? "choices inline" : "choices" });
      opts.forEach(([value, title], i) => list.append(choice(f, type, value, title, i, chosen.includes(value))));
      if (type === "radio" && !f.required && !f.defaulted) list.append(choice(f, "radio", "", "No answer", opts.length, false));
      box = el("fieldset", { class: "field", "aria-describedby": hintId },
        el("legend", {}, document.createTextNode(f.label), optional), ...notes, list);
    } else {
      let control;
      if (f.control === "select") {
        control = el("select", { id: f.id, name: f.id, required: f.required, "aria-describedby": hintId },
          el("option", { value: "", text: f.required ? "Choose one" : "No answer" }));
        for (const [value, title] of f.options) control.append(el("option", { value, text: title }));
        control.value = dflt === undefined ? "" : String(dflt);
      } else {
        const numeric = f.kind === "integer" || f.kind === "number";
        const attrs = numeric
          ? { type: "number", step: f.kind === "integer" ? "1" : "any", min: f.prop.minimum, max: f.prop.maximum }
          : { type: INPUT_TYPES[f.prop.format] || "text", minlength: f.prop.minLength, maxlength: f.prop.maxLength };
        control = el("input", { id: f.id, name: f.id, required: f.required, "aria-describedby": hintId, ...attrs });
        if (dflt !== undefined && dflt !== null) control.value = String(dflt);
      }
      box = el("div", { class: "field" }, el("label", { for: f.id }, document.createTextNode(f.label), optional), ...notes, control);
    }
    f.box = box;
    box.addEventListener("change", () => touched(f));
    box.addEventListener("input", () => f.touched && check(f));
    box.addEventListener("focusout", () => touched(f));
    return box;
  }

  function touched(f) {
    f.touched = true;
    check(f);
  }

  // -- reading and checking what was typed (the server checks again) ------------------------------------------
  function read(f) {
    const inputs = [...f.box.querySelectorAll("input, select")];
    if (f.control === "check") return inputs[0].checked;
    if (f.control === "multi") return inputs.filter((i) => i.checked).map((i) => i.value);
    if (f.control === "yesno" || f.control === "radios") {
      const on = inputs.find((i) => i.checked);
      if (!on || on.value === "") return undefined;
      return f.control === "yesno" ? on.value === "true" : on.value;
    }
    const raw = inputs[0].value.trim();
    if (raw === "") return undefined;
    if (f.kind === "integer" || f.kind === "number") return Number(raw);
    if (f.prop.format === "date-time" && raw.length === 16) return `${raw}:00Z`;
    if (f.prop.format === "date-time" && raw.length === 19) return `${raw}Z`;
    return raw;
  }

  function problemOf(f, value) {
    const p = f.prop;
    const what = f.label;
    if (value === undefined) {
      if (!f.required) return null;
      return f.control === "input" ? `Enter ${what}` : `Choose ${what}`;
    }
    if (f.control === "multi") {
      if (Number.isInteger(p.minItems) && value.length < p.minItems) return `Choose at least ${p.minItems} for ${what}`;
      if (Number.isInteger(p.maxItems) && value.length > p.maxItems) return `Choose at most ${p.maxItems} for ${what}`;
      return null;
    }
    if (f.kind === "integer" || f.kind === "number") {
      if (!Number.isFinite(value)) return `${what} must be a number`;
      if (f.kind === "integer" && !Number.isInteger(value)) return `${what} must be a whole number`;
      if (typeof p.minimum === "number" && value < p.minimum) return `${what} must be ${p.minimum} or more`;
      if (typeof p.maximum === "number" && value > p.maximum) return `${what} must be ${p.maximum} or less`;
      return null;
    }
    if (typeof value !== "string" || f.control !== "input") return null;
    const length = [...value].length;
    if (Number.isInteger(p.minLength) && length < p.minLength) return `${what} must be at least ${p.minLength} characters`;
    if (Number.isInteger(p.maxLength) && length > p.maxLength) return `${what} must be at most ${p.maxLength} characters`;
    if (p.format === "email" && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) return `Enter ${what} as an email address, like name@example.com`;
    if (p.format === "uri") {
      try {
        new URL(value);
      } catch {
        return `Enter ${what} as a full address, like https://example.com`;
      }
    }
    return null;
  }

  function mark(f, message) {
    f.problem = message;
    f.errorNode.hidden = !message;
    f.errorNode.replaceChildren();
    if (message) f.errorNode.append(el("span", { class: "visually-hidden", text: "Error: " }), document.createTextNode(message));
    f.box.classList.toggle("invalid", Boolean(message));
    const ids = [`${f.id}-hint`, message ? `${f.id}-error` : null].filter((id) => id && document.getElementById(id));
    const targets = f.box.tagName === "FIELDSET" ? [f.box] : [f.box.querySelector("input, select")];
    for (const t of targets) {
      if (ids.length) t.setAttribute("aria-describedby", ids.join(" "));
      else t.removeAttribute("aria-describedby");
    }
    for (const input of f.box.querySelectorAll("input, select")) {
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }

  function check(f) {
    mark(f, problemOf(f, read(f)));
    return !f.problem;
  }

  function summary(problems, intro) {
    const box = question.summary;
    const list = el("ul");
    for (const [f, text] of problems) {
      const item = f
        ? el("a", { href: `#${f.id}`, text, onclick: (e) => { e.preventDefault(); document.getElementById(f.id).focus(); } })
        : document.createTextNode(text);
      list.append(el("li", {}, item));
    }
    box.replaceChildren(el("h2", { id: "summary-title", text: "There is a problem" }));
    if (intro) box.append(el("p", { text: intro }));
    if (problems.length) box.append(list);
    box.hidden = false;
    box.focus();
  }

  // -- one question --------------------------------------------------------------------------------------------
  function ask(pending) {
    const schema = pending.schema;
    const props = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const fields = Object.entries(props).map(([name, prop], i) => fieldOf(name, prop || {}, required.has(name), i));
    const summaryBox = el("div", { class: "error-summary", id: "summary", tabindex: "-1", role: "alert",
      "aria-labelledby": "summary-title", hidden: true });
    const heading = el("h1", { id: "title", tabindex: "-1", text: pending.message });
    const form = el("form", { novalidate: true, "aria-labelledby": "title" }, ...fields.map(renderField));
    // Hosts' frames may not allow forms to submit: the buttons and Enter act on their own, and nothing submits.
    const button = (text, action, primary) =>
      el("button", { type: "button", class: primary ? "primary" : null, text, onclick: () => answer(action) });
    form.append(el("div", { class: "actions" }, button("Send", "accept", true), button("Decline", "decline"), button("Cancel", "cancel")));
    form.addEventListener("submit", (e) => e.preventDefault());
    form.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && e.target instanceof HTMLInputElement && !e.isComposing) {
        e.preventDefault();
        answer("accept");
      }
    });
    const expires = Number(pending.expiresAt);
    const note = Number.isFinite(expires)
      ? el("p", { class: "note", text: `Answer by ${new Date(expires).toLocaleString()}. Your answer goes to the tool; the assistant sees only what the tool returns.` })
      : null;
    question = { pending, fields, summary: summaryBox, tool: String(pending.answerTool || "sendElicitationResult") };
    replace(el("div", { class: "card" }, el("p", { class: "brand", text: "Question from the tool" }), summaryBox, heading, form, note));
    heading.focus();
    say(`Question: ${pending.message}`);
  }

  async function answer(action) {
    if (!question || sending) return;
    const { pending, fields, tool } = question;
    const args = { elicitId: pending.elicitId, action };
    if (action === "accept") {
      fields.forEach((f) => (f.touched = true));
      const bad = fields.filter((f) => !check(f));
      if (bad.length) return summary(bad.map((f) => [f, f.problem]));
      const content = {};
      for (const f of fields) {
        const value = read(f);
        if (value !== undefined) content[f.name] = value;
      }
      args.content = content;
    }
    sending = true;
    for (const b of view.querySelectorAll("button")) b.disabled = true;
    say("Sending your answer");
    let result;
    try {
      result = await request("tools/call", { name: tool, arguments: args });
    } catch (error) {
      sending = false;
      for (const b of view.querySelectorAll("button")) b.disabled = false;
      return summary([], `Your answer could not be sent: ${error.message}`);
    }
    sending = false;
    if (question && question.pending === pending && result.isError) {
      for (const b of view.querySelectorAll("button")) b.disabled = false;
      // The refused fields; a validator's author's own words when the server has them, else our own message.
      const found = result._meta && Array.isArray(result._meta.elicitationProblems) ? result._meta.elicitationProblems : [];
      const problems = [];
      for (const p of found) {
        const f = fields.find((x) => x.name === String((p && p.path) || "").split(".")[0]);
        if (!f) {
          problems.push([null, "The answer was not accepted as a whole. Check each answer and send the form again."]);
          continue;
        }
        const words = p.said ? String(p.said) : problemOf(f, read(f)) || `Check ${f.label}${hintOf(f) ? " against its hint" : ""}`;
        mark(f, words);
        problems.push([f, words]);
      }
      return summary(problems, problems.length ? null : textOf(result) || "The answer was not taken.");
    }
    tell(action, result);
    show(result);
  }

  function tell(action, result) {
    // Keep the model in the loop when the host lets the view add to its context.
    if (!hostCaps.updateModelContext || pendingOf(result)) return;
    const said = { accept: "answered", decline: "declined", cancel: "cancelled" }[action];
    const text = `The user ${said} the tool's question in elicitkit's form. The tool's result: ${textOf(result)}`;
    request("ui/update-model-context", { content: [{ type: "text", text }] }).catch(() => {});
  }

  // -- the handshake, and the size the host should give the frame ----------------------------------------------
  if (typeof ResizeObserver === "function") {
    let last = 0;
    new ResizeObserver(() => {
      const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (height !== last) notify("ui/notifications/size-changed", { height: (last = height) });
    }).observe(document.documentElement);
  }
  request("ui/initialize", {
    appInfo: { name: "elicitkit-form", version: "1" },
    appCapabilities: {},
    protocolVersion: PROTOCOL,
  }).then(
    (result) => {
      hostCaps = (result && result.hostCapabilities) || {};
      theme((result && result.hostContext) || {});
      notify("ui/notifications/initialized");
    },
    () => end("Cannot start", "The host did not accept this view.", true),
  );
})();
