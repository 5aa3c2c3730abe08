// app.js: the page's start and its views. The address names the view
// (#/ the runs, #/new the start form, #/run/ID[/TAB] a run), so a reload
// shows the same one; everything on it is rebuilt from the API's reads
// and streams. The page keeps two things: the token, and the id of the
// last event of every run's stream it has taken (to resume after it).
"use strict";

(() => {
  const { el } = U;
  const LAST = "ultra.lastEvent";
  const main = document.getElementById("main");
  const conn = document.getElementById("conn");
  let all = null; // the stream of every run's events

  function showConn() {
    const s = API.connState();
    conn.dataset.state = s;
    conn.textContent = { live: "live", reconnecting: "reconnecting…", connecting: "connecting…", unauthorized: "no access", failed: "stream failed", idle: "" }[s] || s;
  }

  function route() {
    const h = location.hash.replace(/^#\/?/, "");
    const parts = h.split("/").filter(Boolean);
    for (const a of document.querySelectorAll("header nav a")) a.removeAttribute("aria-current");
    if (parts[0] === "run" && parts[1]) {
      Overview.hide();
      RunView.show(main, decodeURIComponent(parts[1]), parts[2]);
      return;
    }
    RunView.hide();
    if (parts[0] === "new") {
      document.getElementById("nav-new").setAttribute("aria-current", "page");
      Overview.showNew(main);
      return;
    }
    document.getElementById("nav-runs").setAttribute("aria-current", "page");
    Overview.show(main);
  }

  // askToken is the page without a token: it says where one comes from
  // and takes one pasted.
  function askToken(why) {
    RunView.hide();
    Overview.hide();
    if (all) all.stop();
    all = null;
    const input = el("input", { id: "token", type: "password", autocomplete: "off", required: true });
    const form = el("form.token-form",
      el("label.field.wide", { for: "token" }, el("span", "token"), input),
      el("button.primary", { type: "submit" }, "Use this token"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      API.setToken(input.value);
      start();
    });
    U.clear(main).append(el("section.card.ask-token",
      el("h1", "ultra needs its token"),
      el("p", why),
      el("p", "Open the address ", el("code", "ultra serve"), " printed (it ends in ", el("code", "?code=…"), "; each code opens one page once), or paste the token of this installation here (",
        el("code", "cat ~/.local/state/ultra/serve.token"), ")."),
      form));
    input.focus();
  }

  function start() {
    if (!API.token()) {
      askToken("This page has no token yet.");
      return;
    }
    if (all) all.stop();
    // The repository this server serves, beside the brand: a tab on
    // another repository's server says so.
    API.request("GET", "/api/info").then((i) => {
      const b = document.querySelector(".brand");
      if (!b || !i.project) return;
      b.textContent = "ultra · " + i.project;
      b.title = i.root + " (ultra " + i.version + ")";
    }).catch(() => {});
    // A tab that has taken no event yet starts at the end: the reads
    // show what is there, the stream what changes.
    const last = sessionStorage.getItem(LAST) || 0;
    all = new API.Stream(last ? "/api/events" : "/api/events?after=latest", (ev, id) => {
      sessionStorage.setItem(LAST, String(id));
      Overview.onEvent(ev);
    }, { last, onState: showConn, onPosition: (id) => sessionStorage.setItem(LAST, String(id)) });
    route();
  }

  // Another browser needs a code of its own: each one opens one page once.
  document.getElementById("share")?.addEventListener("click", async () => {
    try {
      const c = await API.request("POST", "/api/codes");
      U.notice("Open this address in the other browser (it works once):\n" + location.origin + c.path, "keep");
    } catch (e) {
      U.notice(e.message, "error");
    }
  });

  API.on("conn", showConn);
  API.on("auth", () => askToken("The server refused the token this page holds (a page's token ends with its ultra serve)."));
  addEventListener("hashchange", route);

  // A few keys, away from fields: n starts a run, r lists the runs, and
  // on a run t g d i open its tabs.
  addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName)) return;
    const tabs = { t: "transcript", g: "goals", d: "diff", i: "details" };
    if (e.key === "n") location.hash = "#/new";
    else if (e.key === "r") location.hash = "#/";
    else if (tabs[e.key] && RunView.current()) RunView.current().showTab(tabs[e.key], true);
  });

  // __ultra is for tests and for a person curious about the streams:
  // dropStreams() ends every connection as a network failure would.
  window.__ultra = {
    dropStreams: () => { for (const s of API.streams) s.drop(); },
    streams: () => [...API.streams].map((s) => ({ path: s.path, last: s.last, connects: s.connects, drops: s.drops, state: s.state })),
  };

  API.takeCode().then((refused) => {
    document.getElementById("boot")?.remove();
    if (refused && !API.token()) askToken(refused);
    else start();
  });
})();
