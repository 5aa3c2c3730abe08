// transcript.js: a run's events as a person reads them. Every event is
// one element carrying data-seq (its place in the run), so the transcript
// is exactly the run's stream: the model's text (thinking folded), each
// tool call with its result, edits as diffs, the gate's decisions,
// criteria, reviews, approvals and the run's end.
"use strict";

const Transcript = (() => {
  const { el, chip } = U;

  // short is a one-line summary of a tool call's arguments.
  function short(tool, args) {
    if (!args || typeof args !== "object") return "";
    for (const k of ["command", "file_path", "pattern", "path", "query", "to", "url"]) {
      if (typeof args[k] === "string") return args[k];
    }
    if (tool === "goals" && Array.isArray(args.goals)) return args.goals.map((g) => g.title).join("; ");
    if (tool === "review") return [args.verdict, args.architecture && args.architecture.status].filter(Boolean).join(" · ");
    const s = JSON.stringify(args);
    return s === "{}" ? "" : s.length > 80 ? s.slice(0, 79) + "…" : s;
  }

  function json(v) {
    return el("pre.code", JSON.stringify(v, null, 2));
  }

  function line(cls, ...kids) {
    return el("div.ev.line." + cls, ...kids);
  }

  function meta(ev) {
    return el("span.ev-meta", { title: ev.time }, "#" + ev.seq + " " + U.clock(ev.time));
  }

  class Transcript {
    // root is the element to fill; onChange is called when the calls
    // that wait for a person change.
    constructor(root, onChange) {
      this.root = root;
      this.onChange = onChange || (() => {});
      this.seqs = new Set();
      this.calls = new Map(); // call id → its card
      this.waiting = new Map(); // call id → {card, data} of a call that waits
      this.finished = false;
    }

    // add renders one event, once.
    add(ev) {
      if (this.seqs.has(ev.seq)) return false;
      this.seqs.add(ev.seq);
      const node = this.render(ev);
      node.dataset.seq = ev.seq;
      node.dataset.type = ev.type;
      if (!node.parentNode) this.root.append(node);
      return true;
    }

    render(ev) {
      const d = ev.data || {};
      const f = this["on_" + ev.type];
      return f ? f.call(this, ev, d) : line("ev-other", meta(ev), el("b", ev.type), " ", el("code", JSON.stringify(d)));
    }

    on_run_started(ev, d) {
      return el("section.ev.card.ev-start",
        el("div.ev-head", meta(ev), el("b", "Run started"), " ", U.badge(d.axes), chip(d.axes && d.axes.surface, "surface")),
        el("p.task", d.task || "(from a brief)"),
        el("p.dim", [d.provider, d.model].filter(Boolean).join(" · "), d.branch ? " · branch " + d.branch : "",
          d.base ? " from " + d.base : "", " · ", d.contained ? "sandbox: " + d.sandbox : "not contained: " + (d.sandbox || "")));
    }

    on_run_resumed(ev, d) {
      this.finished = false;
      return line("ev-resumed", meta(ev), el("b", "Resumed"), " from ", d.from || "", d.guidance ? ": " + d.guidance : "");
    }

    on_phase_changed(ev, d) {
      return el("div.ev.phase", meta(ev), " ", chip(d.from || "start", "from"), " → ", chip(d.to, "phase"),
        el("span.dim", " by " + (d.by || "?") + (d.reason ? ": " + d.reason : "")));
    }

    on_axis_changed(ev, d) {
      return line("ev-axis", meta(ev), el("b", d.axis), " ", chip(d.from, "from"), " → ", chip(d.to, d.axis),
        el("span.dim", [d.by && " by " + d.by, d.scope && " (" + d.scope + ")", d.reason && ": " + d.reason].filter(Boolean).join("")));
    }

    on_plan_proposed(ev, d) {
      return el("section.ev.card.ev-plan",
        el("div.ev-head", meta(ev), el("b", "Plan"), " ", d.accepted ? chip("accepted") : chip("waiting"), d.by ? el("span.dim", " by " + d.by) : ""),
        el("pre.plan", d.plan || ""));
    }

    on_model_request(ev, d) {
      return line("ev-model dim", meta(ev), "→ ", d.model || "model", " turn ", d.turn, " (", d.messages, " messages)");
    }

    on_model_response(ev, d) {
      const u = d.usage || {};
      const n = el("div.ev.line.ev-model.dim", meta(ev), "← turn ", d.turn, ": ", U.tokens(u.input_tokens), " in · ",
        U.tokens(u.output_tokens), " out · ", d.duration || "", d.tool_calls ? " · " + d.tool_calls + " call(s)" : "");
      if (d.error) {
        n.classList.remove("ev-model"); // a failed request is never folded away
        n.append(el("span.err", " " + (d.error.message || JSON.stringify(d.error))));
      }
      return n;
    }

    on_model_retry(ev, d) {
      return line("ev-warn", meta(ev), "model retry ", d.attempt, " in ", d.wait, ": ", d.error);
    }

    on_assistant_text(ev, d) {
      const n = el("section.ev.say", meta(ev));
      if (d.thinking) n.append(el("details.thinking", el("summary", "Thinking"), el("div.prose", d.thinking)));
      if (d.text) n.append(el("div.prose", d.text));
      return n;
    }

    on_tool_call(ev, d) {
      const sum = el("summary", el("b.tool", d.tool), " ", el("span.args", short(d.tool, d.args)), el("span.call-state", " running…"));
      const card = el("details.ev.call", { "data-call": d.call_id }, sum, el("div.call-body", meta(ev), json(d.args)));
      this.calls.set(d.call_id, card);
      return card;
    }

    on_tool_result(ev, d) {
      const card = this.calls.get(d.call_id);
      const body = el("div.ev.result" + (d.is_error ? ".is-error" : ""), meta(ev), " ", d.duration ? el("span.dim", d.duration) : "");
      const det = d.details || {};
      if (det.diff) body.append(U.diffView(det.diff));
      else body.append(el("pre.out", d.output || ""));
      if (det.diff && d.output) body.append(el("p.dim", String(d.output).split("\n")[0]));
      if (!card) return el("details.ev.call.orphan", el("summary", el("b.tool", d.tool), " result"), body);
      const state = card.querySelector(".call-state");
      state.textContent = d.is_error ? " error" : " ok";
      state.className = "call-state " + (d.is_error ? "err" : "ok");
      if (det.diff) card.open = true;
      card.classList.toggle("failed", !!d.is_error);
      card.append(body);
      this.resolve(d.call_id, d.is_error ? "interrupted" : "");
      return body;
    }

    on_refusal(ev, d) {
      return el("div.ev.card.ev-refusal", meta(ev), " ", chip("refused"), " ", el("b", d.tool), " ", el("span.dim", "[" + d.layer + "]"), el("p", d.reason));
    }

    on_verify_result(ev, d) {
      const n = el("section.ev.card.gate",
        el("div.ev-head", meta(ev), el("b", "Gate" + (d.gate ? " " + d.gate : "")), " ", chip(d.status, "gate"),
          el("span", " " + d.passed + " passed, " + d.failed + " failed, " + d.skipped + " skipped" + (d.cached ? " (cached)" : "") + (d.duration ? " · " + d.duration : ""))),
        el("p", d.reason || ""));
      if (d.failing && d.failing.length) {
        n.append(el("ul.failing", d.failing.map((f, i) => el("li", el("code", f), d.failing_why && d.failing_why[i] ? " " + d.failing_why[i] : ""))));
      }
      if (d.commands && d.commands.length) n.append(el("p.dim", "$ " + d.commands.join("; ")));
      return n;
    }

    on_baseline(ev, d) {
      return line("ev-baseline dim", meta(ev), "baseline: ", d.evaluated ? d.executed + " tests, " + d.failed + " failing" : "not evaluated: " + (d.reason || ""),
        d.reused ? " (" + d.reused + ")" : "");
    }

    on_warning(ev, d) {
      return line("ev-warn", meta(ev), chip("warning"), " ", d.message);
    }

    on_compaction(ev, d) {
      return line("ev-other dim", meta(ev), "compaction (", d.kind, "): ", U.tokens(d.before), " → ", U.tokens(d.after), " tokens");
    }

    on_commit(ev, d) {
      return line("ev-commit", meta(ev), el("b", "Commit"), " ", el("code", String(d.commit || "").slice(0, 12)), " on ", d.branch, " (gate ", d.gate, ") ", chip(d.status));
    }

    on_ledger(ev, d) {
      return line("ev-ledger dim", meta(ev), "ledger ", d.seq, " ", d.kind, d.goal ? " " + d.goal : "", d.criterion ? "/" + d.criterion : "", d.text ? ": " + d.text : "");
    }

    on_criterion(ev, d) {
      return el("div.ev.card.ev-criterion", meta(ev), " ", el("b", d.criterion), " ", chip(d.status, "criterion"),
        d.base ? el("span.dim", " on the base tree (" + d.base.replaceAll("_", " ") + ")") : "",
        " ", el("span.dim", "[" + [d.surface, d.channel].filter(Boolean).join(", ") + "]"),
        el("p", d.summary), d.reason ? el("p.err", d.reason) : "",
        d.evidence && d.evidence.length ? el("p.dim", "evidence: " + d.evidence.map((p) => p.split("/").pop()).join(", ")) : "");
    }

    on_review(ev, d) {
      return el("section.ev.card.ev-review",
        el("div.ev-head", meta(ev), el("b", "Review " + (d.round || "")), " ", chip(d.verdict, "verdict"), d.architecture ? chip(d.architecture, "architecture") : ""),
        d.blockers && d.blockers.length ? el("ul", d.blockers.map((b) => el("li", b))) : "",
        d.architecture_reasons && d.architecture_reasons.length ? el("ul.dim", d.architecture_reasons.map((b) => el("li", b))) : "");
    }

    // callState says where a call stands on its line ("waits for you",
    // "allowed", "denied") until its result comes.
    callState(callID, text) {
      const card = this.calls.get(callID);
      const st = card && card.querySelector(".call-state");
      if (st && !st.classList.contains("ok") && !st.classList.contains("err")) st.textContent = " " + text;
    }

    on_approval(ev, d) {
      this.callState(d.call_id, d.state === "waiting" ? "waits for you" : d.state.replaceAll("_", " "));
      if (d.state !== "waiting") {
        this.resolve(d.call_id, d.state);
        return line("ev-approval", meta(ev), el("b", d.tool), " ", chip(d.state, "approval"), d.reason ? " " + d.reason : "");
      }
      const card = el("section.ev.card.approval.waiting", { "data-call": d.call_id },
        el("div.ev-head", meta(ev), el("b", "Approval"), " ", chip("waiting"), " ", el("b.tool", d.tool), " ", el("span.args", short(d.tool, d.args))));
      this.waiting.set(d.call_id, { card, data: d });
      if (this.finished) this.resolve(d.call_id, "interrupted");
      this.onChange();
      return card;
    }

    // resolve marks a waiting approval as answered (or no longer waiting).
    resolve(callID, state) {
      const w = this.waiting.get(callID);
      if (!w) return;
      this.waiting.delete(callID);
      w.card.classList.remove("waiting");
      w.card.querySelector(".chip").replaceWith(chip(state || "answered", "approval"));
      this.onChange();
    }

    // pending are the calls that wait for a person: their approval data.
    pending() {
      return [...this.waiting.values()].map((w) => w.data);
    }

    on_control(ev, d) {
      return line("ev-control dim", meta(ev), "control ", el("b", d.kind), ": ", d.outcome, d.scope ? " (" + d.scope + ")" : "", d.who ? " by " + d.who : "");
    }

    on_answer(ev, d) {
      return el("section.ev.card.ev-answer", el("div.ev-head", meta(ev), el("b", "Answer"), d.path ? el("span.dim", " " + d.path) : ""), el("div.prose", d.text));
    }

    on_cleanup(ev, d) {
      return line("ev-cleanup", meta(ev), "cleanup ", chip(d.result), d.files && d.files.length ? " " + d.files.join(", ") : "", d.reason ? ": " + d.reason : "");
    }

    on_mcp(ev, d) {
      return line("ev-mcp dim", meta(ev), "MCP: ", (d.servers || []).map((s) => s.name + " " + s.state + " (" + s.tools + " tools)").join(", ") || "none");
    }

    on_hooks(ev, d) {
      return line("ev-hooks dim", meta(ev), "hooks at ", d.event, d.target ? " (" + d.target + ")" : "", ": ", d.ran, " ran", d.decision ? ", " + d.decision : "", d.failed ? ", " + d.failed + " failed" : "");
    }

    on_run_finished(ev, d) {
      this.finished = true;
      for (const id of [...this.waiting.keys()]) this.resolve(id, "interrupted");
      const u = d.usage || {};
      return el("section.ev.card.finished.f-" + U.role(d.status),
        el("div.ev-head", meta(ev), el("b", "Run finished"), " ", chip(d.status, "status")),
        d.reason ? el("p", d.reason) : "",
        el("p.dim", d.turns + " turns · " + U.tokens(u.input_tokens) + " in · " + U.tokens(u.output_tokens) + " out · " + (d.wall || "") + (d.cost ? " · $" + d.cost.toFixed(4) : "") + " · exit " + d.exit_code));
    }
  }

  Transcript.short = short;
  return Transcript;
})();
