// api.js: the token, API requests and the event streams.
//
// The address ultra serve prints carries a one-time code (?code=…), not
// the token: a browser keeps every address it opens. The page takes the
// code out of the address bar, trades it for a session token
// (POST /api/session), keeps that in this tab's sessionStorage, and sends
// it as a header on every request. An EventSource cannot send headers, so
// the streams are read with fetch() and parsed here; a dropped stream
// reconnects with Last-Event-ID, the id of the last event received, so no
// event is lost and none is shown twice.
"use strict";

const API = (() => {
  const TOKEN = "ultra.token";
  const listeners = { auth: [], conn: [] };

  // takeCode trades the address's one-time code, if any, for a session
  // token; it resolves to "" or to why the code was refused.
  async function takeCode() {
    const u = new URL(location.href);
    const code = u.searchParams.get("code");
    if (!code) return "";
    u.searchParams.delete("code");
    history.replaceState(history.state, "", u.pathname + u.search + u.hash);
    try {
      const r = await fetch("/api/session", {
        method: "POST", headers: { "Content-Type": "application/json" }, cache: "no-store",
        body: JSON.stringify({ code: code.trim() }),
      });
      const b = await r.json().catch(() => ({}));
      if (!r.ok || !b.token) return b.error || "the server refused the code (" + r.status + ")";
      setToken(b.token);
      return "";
    } catch (e) {
      return "the server does not answer (" + e.message + ")";
    }
  }

  function token() {
    return sessionStorage.getItem(TOKEN) || "";
  }

  function setToken(t) {
    sessionStorage.setItem(TOKEN, t.trim());
  }

  function unauthorized() {
    for (const f of listeners.auth) f();
  }

  // ApiError is an answer of the API that is not a success: its status,
  // the message to show, and the body.
  class ApiError extends Error {
    constructor(status, message, body) {
      super(message);
      this.status = status;
      this.body = body;
    }
  }

  // request makes an API request; it resolves to the JSON or text answer,
  // or rejects with an ApiError whose message is the server's.
  async function request(method, path, body) {
    const headers = { Authorization: "Bearer " + token() };
    const init = { method, headers, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let r;
    try {
      r = await fetch(path, init);
    } catch (e) {
      throw new ApiError(0, method + " " + path + ": the server does not answer (" + e.message + ")", null);
    }
    const ct = r.headers.get("Content-Type") || "";
    const data = ct.includes("application/json") ? await r.json().catch(() => null) : await r.text();
    if (r.status === 401) unauthorized();
    if (!r.ok) {
      let msg = typeof data === "string" ? data : (data && (data.error || data.output)) || r.statusText;
      if (data && data.command && data.exit) msg = data.command + " (exit " + data.exit + "): " + msg;
      throw new ApiError(r.status, msg, data);
    }
    return data;
  }

  // blob fetches a file (an evidence image) with the token, as a blob.
  async function blob(path) {
    const r = await fetch(path, { headers: { Authorization: "Bearer " + token() } });
    if (!r.ok) throw new ApiError(r.status, path + ": " + r.status, null);
    return r.blob();
  }

  const streams = new Set();

  // Stream reads the Server-Sent Events at path and calls onEvent(event,
  // id) once per event, in order. last is the id to resume after; ids
  // only grow, so an event at or below the last one is never passed on.
  class Stream {
    constructor(path, onEvent, opts) {
      opts = opts || {};
      this.path = path;
      this.onEvent = onEvent;
      this.onState = opts.onState || (() => {});
      this.onPosition = opts.onPosition || (() => {});
      this.last = Number(opts.last || 0);
      this.connects = 0;
      this.drops = 0;
      this.state = "connecting";
      this.stopped = false;
      this.ctrl = null;
      this.watchdog = null;
      streams.add(this);
      this.loop();
    }

    setState(s, why) {
      if (this.state === s) return;
      this.state = s;
      this.onState(s, why);
      for (const f of listeners.conn) f();
    }

    // drop ends the connection as a network failure would: the stream
    // reconnects from its last event.
    drop() {
      this.drops++;
      if (this.ctrl) this.ctrl.abort();
    }

    stop() {
      this.stopped = true;
      streams.delete(this);
      if (this.ctrl) this.ctrl.abort();
      clearTimeout(this.watchdog);
      for (const f of listeners.conn) f();
    }

    // alive restarts the watchdog: a connection that brings nothing, not
    // even a heartbeat, for 45 s is taken for dropped.
    alive() {
      clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => this.drop(), 45000);
    }

    async loop() {
      let wait = 250;
      while (!this.stopped) {
        this.ctrl = new AbortController();
        const headers = { Authorization: "Bearer " + token(), Accept: "text/event-stream" };
        if (this.last > 0) headers["Last-Event-ID"] = String(this.last);
        try {
          const r = await fetch(this.path, { headers, signal: this.ctrl.signal, cache: "no-store" });
          if (r.status === 401) {
            unauthorized();
            this.setState("unauthorized");
            this.stop();
            return;
          }
          if (!r.ok) {
            const b = await r.json().catch(() => ({}));
            if (r.status === 404 || r.status === 400) {
              this.setState("failed", b.error || String(r.status));
              this.stop();
              return;
            }
            throw new Error(b.error || "HTTP " + r.status);
          }
          this.connects++;
          this.setState("live");
          wait = 250;
          await this.read(r.body.getReader());
        } catch (e) {
          if (this.stopped) return;
        }
        clearTimeout(this.watchdog);
        if (this.stopped) return;
        this.setState("reconnecting");
        await new Promise((res) => setTimeout(res, wait));
        wait = Math.min(wait * 2, 5000);
      }
    }

    async read(reader) {
      const dec = new TextDecoder();
      let buf = "", id = "", data = [];
      this.alive();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        this.alive();
        buf += dec.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          let line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.endsWith("\r")) line = line.slice(0, -1);
          if (line === "") {
            if (data.length) this.dispatch(id, data.join("\n"));
            else if (id !== "" && Number(id) > this.last) {
              // ?after=latest: where the stream starts.
              this.last = Number(id);
              this.onPosition(this.last);
            }
            id = "";
            data = [];
          } else if (line.startsWith(":")) {
            // a comment: the heartbeat
          } else {
            const c = line.indexOf(":");
            const field = c < 0 ? line : line.slice(0, c);
            let val = c < 0 ? "" : line.slice(c + 1);
            if (val.startsWith(" ")) val = val.slice(1);
            if (field === "id") id = val;
            else if (field === "data") data.push(val);
          }
        }
      }
    }

    dispatch(idText, text) {
      const id = Number(idText);
      if (idText !== "" && id <= this.last) return; // already passed on
      let ev;
      try {
        ev = JSON.parse(text);
      } catch (e) {
        return;
      }
      if (idText !== "") this.last = id;
      try {
        this.onEvent(ev, id);
      } catch (e) {
        console.error("rendering event", id, e);
      }
    }
  }

  function on(kind, f) {
    listeners[kind].push(f);
  }

  // connState is the worst state of the open streams, for the header.
  function connState() {
    let s = "live";
    for (const st of streams) {
      if (st.state !== "live") s = st.state;
    }
    return streams.size ? s : "idle";
  }

  return { takeCode, token, setToken, request, blob, Stream, ApiError, on, connState, streams };
})();
