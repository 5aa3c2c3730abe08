// util.js: building elements, the badge's colours, formatting and the
// notices a person reads. No framework: every element is made here, with
// classes only (the server's Content-Security-Policy forbids inline
// styles and scripts).
"use strict";

const U = (() => {
  // el("div.card.wide", {attrs}, children…): an element with classes,
  // attributes (on* keys are listeners) and children (strings are text).
  function el(spec, attrs, ...kids) {
    const [tag, ...classes] = spec.split(".");
    const e = document.createElement(tag || "div");
    if (classes.length) e.className = classes.join(" ");
    if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
      kids.unshift(attrs);
      attrs = null;
    }
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
      else if (k === "text") e.textContent = v;
      else if (k === "class") e.className += (e.className ? " " : "") + v;
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    add(e, kids);
    return e;
  }

  function add(e, kids) {
    for (const k of kids.flat(Infinity)) {
      if (k === undefined || k === null || k === false) continue;
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
  }

  function clear(e) {
    while (e.firstChild) e.firstChild.remove();
    return e;
  }

  // The TUI badge's palette (internal/surface/tui/badge.go): every axis
  // value takes a role, and so does every status.
  const valueRole = {
    chat: "dim", plan: "accent", build: "success", review: "warning", repair: "error", research: "info",
    manual: "dim", assisted: "warning", autonomous: "success",
    restricted: "success", normal: "dim", trusted: "warning", unrestricted: "error",
  };
  const statusRole = {
    complete: "success", done: "success", pass: "success", PASS: "success", allowed: "success",
    allowed_for_run: "success", allowed_read_only_for_run: "success", APPROVE: "success", CLEAR: "success",
    running: "info", verifying: "info", reviewing: "info", building: "info", planning: "accent", iterating: "info",
    waiting: "warning", needs_approval: "warning", paused: "warning", stopped: "warning", interrupted: "warning",
    resumable: "warning", blocked: "warning", pending: "dim", in_progress: "info", CONCERNS: "warning",
    failed: "error", fail: "error", FAIL: "error", escalated: "error", budget_exhausted: "error", stuck: "error",
    denied: "error", BLOCKERS: "error", BLOCKED: "error", ERROR: "error",
    cancelled: "dim", skipped: "dim",
  };

  function role(v) {
    return valueRole[v] || statusRole[v] || "plain";
  }

  // chip is a colour-coded value; label (optional) names what it is for
  // a screen reader and a tooltip.
  function chip(value, label) {
    const v = value === undefined || value === null || value === "" ? "?" : String(value);
    return el("span.chip.c-" + role(v), { title: label ? label + ": " + v : null, "aria-label": label ? label + " " + v : null }, v.replaceAll("_", " "));
  }

  // badge is a run's four axes as chips, in the TUI badge's order.
  function badge(axes) {
    axes = axes || {};
    return el("span.badge", { role: "group", "aria-label": "axes" },
      chip(axes.mode, "mode"), chip(axes.control, "control"),
      chip(axes.permission_profile, "permission profile"), chip(axes.model_mode, "model mode"));
  }

  function tokens(n) {
    n = Number(n || 0);
    if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
    return String(n);
  }

  function ago(t) {
    const d = (Date.now() - new Date(t).getTime()) / 1000;
    if (!isFinite(d)) return "";
    if (d < 60) return Math.max(0, Math.round(d)) + "s ago";
    if (d < 3600) return Math.round(d / 60) + "m ago";
    if (d < 86400) return Math.round(d / 3600) + "h ago";
    return new Date(t).toLocaleString();
  }

  function clock(t) {
    const d = new Date(t);
    return isNaN(d) ? "" : d.toLocaleTimeString();
  }

  // diffView renders unified diff text with a class per kind of line.
  function diffView(text) {
    const pre = el("pre.diff");
    for (const line of String(text || "").split("\n")) {
      let k = "ctx";
      if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")) k = "file";
      else if (line.startsWith("@@")) k = "hunk";
      else if (line.startsWith("+")) k = "add";
      else if (line.startsWith("-")) k = "del";
      else if (line.startsWith("#")) k = "note";
      pre.append(el("span.dl.dl-" + k, line + "\n"));
    }
    return pre;
  }

  // notice shows a message to the person: errors stay until dismissed,
  // other notices go after a while.
  function notice(text, kind) {
    kind = kind || "info";
    const box = document.getElementById("notices");
    const n = el("div.notice.n-" + kind, { role: kind === "error" ? "alert" : "status" },
      el("pre.notice-text", text),
      el("button.link", { type: "button", "aria-label": "dismiss", onclick: () => n.remove() }, "×"));
    box.append(n);
    if (kind !== "error" && kind !== "keep") setTimeout(() => n.remove(), 8000);
    while (box.children.length > 5) box.firstChild.remove();
    return n;
  }

  // confirmable makes a button ask once more before it acts: the first
  // press says what it will do, a second within a few seconds does it.
  function confirmable(btn, ask, act) {
    let armed = null;
    const label = btn.textContent;
    btn.addEventListener("click", () => {
      if (armed) {
        clearTimeout(armed);
        armed = null;
        btn.textContent = label;
        btn.classList.remove("armed");
        act();
        return;
      }
      btn.textContent = ask;
      btn.classList.add("armed");
      armed = setTimeout(() => {
        armed = null;
        btn.textContent = label;
        btn.classList.remove("armed");
      }, 4000);
    });
    return btn;
  }

  // debounce calls fn once after the calls stop for ms (at most once
  // every ms while they go on).
  function debounce(fn, ms) {
    let t = null, last = 0;
    return () => {
      if (t) return;
      const wait = Math.max(0, ms - (Date.now() - last));
      t = setTimeout(() => {
        t = null;
        last = Date.now();
        fn();
      }, wait);
    };
  }

  return { el, add, clear, chip, badge, role, tokens, ago, clock, diffView, notice, confirmable, debounce };
})();
