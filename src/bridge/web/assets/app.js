// eboardctl serve: the pages' shared code. One live model of the boards fed by /api/events
// (a Snapshot first, then every change), and the pieces every page draws: the SVG diagram
// with the last move marked, clocks that count down between updates, players, alerts.
// No framework and nothing from outside: the bridge must work in a hall without internet.
"use strict";

const EB = (() => {
  const FILES = "abcdefgh";
  // Filled glyphs for both sides; white pieces are drawn filled white with a dark outline,
  // which reads better on a stream than the hollow outline glyphs.
  const GLYPH = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
  const SVG = "http://www.w3.org/2000/svg";

  const boards = new Map(); // id -> { props, lastMove, stamp, flag }
  const state = { sourceUp: true, link: "connecting", sourceReason: "" };
  let render = () => {};
  let queued = false;

  function schedule() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; render(); });
  }

  // --- the model -------------------------------------------------------------------------

  function entry(id) {
    let b = boards.get(id);
    if (!b) {
      b = { props: {}, lastMove: null, stamp: performance.now(), flag: null };
      boards.set(id, b);
    }
    return b;
  }

  const TIME_PROPS = ["WhiteTimeMs", "BlackTimeMs", "ClockRunning"];

  function handle(member, d) {
    const now = performance.now();
    switch (member) {
      case "Snapshot":
        boards.clear();
        for (const b of d.boards) {
          boards.set(b.board, { props: b.properties, lastMove: b.last_move, stamp: now, flag: null });
        }
        state.sourceUp = d.source_up;
        break;
      case "InterfacesAdded":
        boards.set(d.board, { props: d.properties, lastMove: null, stamp: now, flag: null });
        break;
      case "InterfacesRemoved":
        boards.delete(d.board);
        break;
      case "PropertiesChanged": {
        const b = entry(d.board);
        Object.assign(b.props, d.changed);
        if (TIME_PROPS.some((k) => k in d.changed)) b.stamp = now;
        break;
      }
      case "LastMove":
        entry(d.board).lastMove = d.uci ? d : null;
        break;
      case "MovePlayed": {
        const b = entry(d.board);
        b.props.WhiteTimeMs = d.white_ms;
        b.props.BlackTimeMs = d.black_ms;
        b.stamp = now;
        break;
      }
      case "FlagFell":
        entry(d.board).flag = d.player;
        break;
      case "GameStarted":
        entry(d.board).flag = null;
        break;
      case "SourceDown":
        state.sourceUp = false;
        state.sourceReason = d.reason || "";
        break;
      case "SourceUp":
        state.sourceUp = true;
        state.sourceReason = "";
        break;
      default:
        return;
    }
    schedule();
  }

  const MEMBERS = ["Snapshot", "InterfacesAdded", "InterfacesRemoved", "PropertiesChanged",
    "LastMove", "MovePlayed", "MoveRetracted", "GameStarted", "IllegalPlacement",
    "IllegalMoveCompleted", "FlagFell", "GameEnded", "SourceDown", "SourceUp"];

  // Opens the event stream. The browser reconnects by itself (sending Last-Event-ID); when it
  // gives up (an answer that is not 200, such as 503), the page opens a new stream itself.
  function connect(board) {
    let lastId = "";
    let es = null;
    const open = () => {
      let url = "/api/events?snapshot=1";
      if (board) url += "&board=" + encodeURIComponent(board);
      if (lastId) url += "&last_event_id=" + encodeURIComponent(lastId);
      es = new EventSource(url);
      es.onopen = () => { state.link = "live"; schedule(); };
      es.onerror = () => {
        state.link = "reconnecting";
        schedule();
        if (es.readyState === EventSource.CLOSED) setTimeout(open, 2000);
      };
      for (const m of MEMBERS) {
        es.addEventListener(m, (ev) => {
          if (ev.lastEventId) lastId = ev.lastEventId;
          let data;
          try { data = JSON.parse(ev.data); } catch (_) { return; }
          handle(m, data);
        });
      }
    };
    open();
    // A page left for another may be kept for the back button with its stream open, and a
    // browser opens at most six connections to one server: after a few pages the next one
    // would wait for ever. Let the stream go when the page is hidden, open it on return.
    addEventListener("pagehide", () => { if (es) es.close(); });
    addEventListener("pageshow", (ev) => { if (ev.persisted) open(); });
  }

  // --- what a board says ------------------------------------------------------------------

  function tag(props, name) {
    const pgn = props.Pgn || "";
    const m = pgn.match(new RegExp("^\\[" + name + " \"((?:[^\"\\\\]|\\\\.)*)\"\\]", "m"));
    return m ? m[1].replace(/\\(.)/g, "$1") : "";
  }

  function players(props) {
    const w = tag(props, "White"), b = tag(props, "Black");
    return {
      white: w && w !== "?" ? w : "White",
      black: b && b !== "?" ? b : "Black",
      whiteElo: tag(props, "WhiteElo"),
      blackElo: tag(props, "BlackElo"),
    };
  }

  // The clock as the broadcast PGN's clock tags give it — the reading lichess runs its
  // viewers' clocks from, so this page and a lichess viewer agree between moves:
  // { white, black (ms), running ("white", "black" or null when stopped), at (epoch ms) },
  // or null when the game carries no clock tags (no clock). Parsed once per PGN text.
  function clockTags(b) {
    const pgn = b.props.Pgn || "";
    if (b.tagsOf === pgn) return b.tags;
    const hms = (v) => v.split(":").reduce((acc, p) => acc * 60 + Number(p), 0) * 1000;
    const w = tag(b.props, "WhiteClock"), bl = tag(b.props, "BlackClock");
    const ref = tag(b.props, "ReferenceTime").match(/^([WB])\/(.+)$/);
    const at = ref ? Date.parse(ref[2]) : NaN;
    b.tags = w && bl && !isNaN(hms(w)) && !isNaN(hms(bl))
      ? { white: hms(w), black: hms(bl), running: isNaN(at) ? null : (ref[1] === "W" ? "white" : "black"), at }
      : null;
    b.tagsOf = pgn;
    return b.tags;
  }

  // How far the clock-tags time may be from the live properties' before the page trusts the
  // properties instead: a viewer's clock (or the rig's) set wrong — a hall without NTP — would
  // otherwise run the tags' clock by minutes or hours. A right clock is within a second or two.
  const SKEW_MS = 5000;

  // Remaining time of `side` now: from the clock tags when the game has them (the time
  // at the reading, less what has passed since for the side whose clock ran), unless that is
  // far from the live properties' time (see SKEW_MS).
  function remaining(b, side) {
    const live = liveRemaining(b, side);
    const tags = b.props.ClockConnected ? clockTags(b) : null;
    if (tags) {
      let ms = tags[side];
      if (tags.running === side) ms -= Date.now() - tags.at;
      ms = Math.max(0, ms);
      if (Math.abs(ms - live) <= SKEW_MS) return ms;
    }
    return live;
  }

  // The last reported time, less what has passed since it came for the side whose clock runs.
  function liveRemaining(b, side) {
    const key = side === "white" ? "WhiteTimeMs" : "BlackTimeMs";
    let ms = Number(b.props[key] || 0);
    if (b.props.ClockRunning === side) ms -= performance.now() - b.stamp;
    return Math.max(0, ms);
  }

  function formatClock(ms) {
    const tenths = Math.floor(ms / 100);
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const two = (n) => String(n).padStart(2, "0");
    if (h > 0) return `${h}:${two(m)}:${two(sec)}`;
    if (ms < 20000) return `${m}:${two(sec)}.${tenths % 10}`;
    return `${m}:${two(sec)}`;
  }

  function lastMoveText(props) {
    const moves = props.Moves || [];
    if (!moves.length) return "";
    const ply = moves.length, n = Math.ceil(ply / 2);
    return ply % 2 ? `${n}. ${moves[ply - 1]}` : `${n}\u2026 ${moves[ply - 1]}`;
  }

  function hasOwn(obj, k) { return Object.prototype.hasOwnProperty.call(obj, k); }

  // What an arbiter must see, most urgent first: [{level, title, detail}].
  function alerts(b) {
    const p = b.props, out = [];
    const claims = p.Claims || [];
    if (hasOwn(p, "Connected") && !p.Connected) {
      out.push({ level: "warn", title: "Board disconnected", detail: p.Port || "" });
    }
    if (p.PendingIllegal) {
      out.push({ level: "alarm", title: "Illegal placement", detail: p.PendingIllegal });
    }
    for (const [player, kind, detail] of claims) {
      if (kind === "illegal-move") {
        out.push({ level: "alarm", title: "Illegal move completed",
          detail: `${cap(player)} may claim: ${detail}` });
      }
    }
    const playing = p.State === "playing";
    const flagged = playing && p.ClockConnected &&
      (Number(p.WhiteTimeMs) === 0 || Number(p.BlackTimeMs) === 0);
    const timeClaim = claims.find((c) => c[1] === "win-on-time");
    if (flagged || timeClaim || (playing && b.flag)) {
      const who = b.flag || (Number(p.WhiteTimeMs) === 0 ? "white" : "black");
      out.push({ level: "alarm", title: "Flag fallen", detail: `${cap(who)}'s flag` });
    }
    for (const [player, kind, detail] of claims) {
      if (kind === "illegal-move" || kind === "win-on-time") continue;
      out.push({ level: "claim", title: "Claim available",
        detail: `${cap(player)}: ${kind.replace(/-/g, " ")}${detail ? " (" + detail + ")" : ""}` });
    }
    if (p.Gap) out.push({ level: "warn", title: "Gap", detail: p.Gap });
    const bat = battery(p);
    if (bat && bat.low) {
      out.push({ level: "warn", title: "Battery low", detail: `${bat.percent}% \u2014 charge the board` });
    }
    return out;
  }

  // The board's battery (the Battery property, [percent, charging]): null for a board
  // without one; below 20 % and not charging it is low, an operator's warning.
  function battery(p) {
    const b = p.Battery;
    if (!Array.isArray(b) || typeof b[0] !== "number" || b[0] < 0) return null;
    return { percent: b[0], charging: !!b[1], low: b[0] < 20 && !b[1] };
  }

  // The BoardModel property in words, after the connection state: " · DGT Bluetooth".
  function modelText(p) {
    const names = { "dgt": "DGT e-board", "dgt-bluetooth": "DGT Bluetooth",
      "dgt-revelation2": "DGT Revelation II", "chesslink": "ChessLink" };
    return p.BoardModel ? " \u00B7 " + (names[p.BoardModel] || p.BoardModel) : "";
  }

  // The ClockModel property in words, after the clock's state: " · DGT 3000".
  function clockModelText(p) {
    const names = { "dgt3000": "DGT 3000", "dgt-xl": "DGT XL" };
    return p.ClockModel ? " \u00B7 " + (names[p.ClockModel] || p.ClockModel) : "";
  }

  function batteryBadge(p) {
    const bat = battery(p);
    if (!bat) return null;
    return el("span", { class: "battery" + (bat.low ? " low" : ""),
      title: "board battery" + (bat.charging ? ", charging" : ""),
      text: `battery ${bat.percent}%${bat.charging ? " charging" : ""}` });
  }

  function cap(s) { return s ? s[0].toUpperCase() + s.slice(1) : s; }

  // What a board plays, in words: "Blitz · FIDE Laws 2005", with "· Chess960" only when the
  // variant is not standard chess (the contract's words say "standard" for both the rules
  // and the variant, which read as "standard · fide-2023 · standard" side by side).
  function rulesText(p) {
    const parts = [];
    if (p.Rules) parts.push(cap(p.Rules) + " play");
    const ed = /^fide-(\d+)$/.exec(p.Edition || "");
    if (ed) parts.push("FIDE Laws " + ed[1]);
    else if (p.Edition) parts.push(p.Edition);
    if (p.Variant && p.Variant !== "standard") parts.push(p.Variant === "chess960" ? "Chess960" : p.Variant);
    return parts.join(" \u00B7 ");
  }

  function resultText(p) {
    if (p.State !== "finished" && (!p.Result || p.Result === "*")) return "";
    const r = { "1-0": "1\u20130", "0-1": "0\u20131", "1/2-1/2": "\u00BD\u2013\u00BD" }[p.Result];
    return r || p.Result || "";
  }

  function stateText(p) {
    if (p.State === "finished") {
      return (p.Termination || "finished").replace(/-/g, " ");
    }
    return p.State || "";
  }

  // Boards in table order: numbered by number, then the others, each by id.
  function ordered() {
    const key = (id, b) => {
      const n = Number(b.props.Number || 0);
      return n > 0 ? [0, n, id] : [1, 0, id];
    };
    return [...boards.entries()].sort((a, b) => {
      const ka = key(a[0], a[1]), kb = key(b[0], b[1]);
      return ka[0] - kb[0] || ka[1] - kb[1] || (ka[2] < kb[2] ? -1 : ka[2] > kb[2] ? 1 : 0);
    });
  }

  // --- drawing -----------------------------------------------------------------------------

  function el(name, attrs, ...children) {
    const e = document.createElement(name);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = v; else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c) e.append(c);
    return e;
  }

  function svg(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The squares of a FEN placement: { "e4": "P", ... }.
  function pieces(fen) {
    const out = {};
    const rows = (fen || "").split(" ")[0].split("/");
    if (rows.length !== 8) return out;
    rows.forEach((row, r) => {
      let f = 0;
      for (const ch of row) {
        if (/\d/.test(ch)) { f += Number(ch); continue; }
        if (f < 8) out[FILES[f] + (8 - r)] = ch;
        f += 1;
      }
    });
    return out;
  }

  // An SVG diagram of `fen` (a FEN or a placement) with the last move marked.
  function diagram(fen, lastMove, flip, opts) {
    const o = opts || {};
    const root = svg("svg", { viewBox: "0 0 8 8", class: "diagram", role: "img",
      "aria-label": "chess diagram" });
    const at = pieces(fen);
    const marked = lastMove ? [lastMove.from, lastMove.to] : [];
    // Squares where `o.against` (the game position) differs: what the arbiter must fix.
    const other = o.against ? pieces(o.against) : null;
    for (let r = 0; r < 8; r++) {
      for (let f = 0; f < 8; f++) {
        const file = flip ? 7 - f : f, rank = flip ? r + 1 : 8 - r;
        const sq = FILES[file] + rank;
        const light = (file + rank) % 2 === 1;
        let cls = "sq " + (light ? "light" : "dark");
        if (marked.includes(sq)) cls += " lastmove " + (sq === marked[0] ? "lm-from" : "lm-to");
        if (other && other[sq] !== at[sq]) cls += " diff";
        root.append(svg("rect", { x: f, y: r, width: 1, height: 1, class: cls, "data-square": sq }));
        const piece = at[sq];
        if (piece) {
          const white = piece === piece.toUpperCase();
          root.append(svg("text", {
            x: f + 0.5, y: r + 0.56, class: "piece " + (white ? "white" : "black"),
            "data-square": sq, "data-piece": piece,
          }, GLYPH[piece.toLowerCase()]));
        }
      }
    }
    if (!o.noCoords) {
      for (let i = 0; i < 8; i++) {
        const file = flip ? 7 - i : i, rank = flip ? i + 1 : 8 - i;
        root.append(svg("text", { x: i + 0.96, y: 7.94, class: "coord file" }, FILES[file]));
        root.append(svg("text", { x: 0.04, y: i + 0.2, class: "coord rank" }, String(rank)));
      }
    }
    return root;
  }

  // A clock element that the tick keeps current.
  function clock(b, side) {
    const running = b.props.ClockRunning === side;
    const ms = remaining(b, side);
    return el("span", {
      class: "clock " + side + (running ? " running" : "") + (ms === 0 && b.props.ClockConnected ? " flagged" : "") + (ms < 60000 && ms > 0 ? " low" : ""),
      "data-side": side, "data-ms": Math.round(ms), text: formatClock(ms),
    });
  }

  // Refreshes every clock on the page without redrawing the rest.
  function tickClocks() {
    for (const c of document.querySelectorAll(".clock[data-board]")) {
      const b = boards.get(c.getAttribute("data-board"));
      if (!b) continue;
      const side = c.getAttribute("data-side");
      const ms = remaining(b, side);
      c.textContent = formatClock(ms);
      c.setAttribute("data-ms", Math.round(ms));
      c.classList.toggle("low", ms < 60000 && ms > 0);
    }
  }

  // Whether the board has a clock to show: one reports through it now, or one did in this
  // game (its last times stand while the cable is out, for the arbiter). A board without one
  // — a ChessLink board, a DGT board with no clock on its cable — shows no clocks at all
  // rather than two grey 0:00.0 that read as a flag fallen; they appear with the first reading.
  function hasClock(p) {
    return !!p.ClockConnected || !!p.ClockModel ||
      Number(p.WhiteTimeMs || 0) > 0 || Number(p.BlackTimeMs || 0) > 0;
  }

  // The side's clock for the pages, or null for a board without a clock (see hasClock).
  function boardClock(id, b, side) {
    if (!hasClock(b.props)) return null;
    const c = clock(b, side);
    c.setAttribute("data-board", id);
    return c;
  }

  function banner(root) {
    const old = document.getElementById("banner");
    if (old) old.remove();
    let text = "";
    if (!state.sourceUp) text = "No live data: " + (state.sourceReason || "the source is down") + " \u2014 showing the boards as last seen";
    else if (state.link !== "live") text = "Connecting to the bridge\u2026";
    if (!text) return;
    root.prepend(el("div", { id: "banner", class: "banner", text }));
  }

  function start(board, draw) {
    render = draw;
    connect(board);
    setInterval(tickClocks, 100);
    schedule();
  }

  function idFromPath(prefix) {
    const path = location.pathname.slice(prefix.length);
    return path.split("/").map(decodeURIComponent).join("/");
  }

  // --- the pages -----------------------------------------------------------------------

  function hall() {
    const root = document.getElementById("hall");
    start(null, () => {
      root.replaceChildren();
      const list = ordered();
      const withAlerts = list.filter(([, b]) => alerts(b).some((a) => a.level === "alarm"));
      // The first board's Event, unless it is PGN's "?" (none set).
      const event = tag(list.length ? list[0][1].props : {}, "Event");
      const head = el("header", { class: "hall-head" },
        el("h1", { text: event && event !== "?" ? event : "Hall" }),
        el("span", { class: "summary", text: `${list.length} boards` + (withAlerts.length ? ` \u2014 ${withAlerts.length} need an arbiter` : "") }));
      root.append(head);
      const grid = el("main", { class: "grid" });
      for (const [id, b] of list) grid.append(card(id, b));
      if (!list.length) grid.append(el("p", { class: "empty", text: "No boards yet." }));
      root.append(grid);
      banner(root);
    });
  }

  function card(id, b) {
    const p = b.props, pl = players(p), al = alerts(b);
    const top = al.length ? al[0].level : "";
    const num = Number(p.Number || 0);
    const c = el("a", { class: "card" + (top ? " " + top : "") + (p.State === "finished" ? " finished" : ""),
      href: "/board/" + id.split("/").map(encodeURIComponent).join("/"), "data-board": id,
      title: rulesText(p) });
    c.append(el("div", { class: "card-head" },
      num > 0 ? el("span", { class: "table", text: String(num) }) : null,
      el("span", { class: "name", text: p.Name || id }),
      batteryBadge(p),
      el("span", { class: "result", text: resultText(p) || stateText(p) })));
    const row = (side) => el("div", { class: "player " + side + (p.Turn === side && p.State === "playing" ? " to-move" : "") },
      el("span", { class: "name", text: side === "white" ? pl.white : pl.black }),
      boardClock(id, b, side));
    c.append(row("white"), row("black"));
    const body = el("div", { class: "card-body" },
      diagram(p.Fen, b.lastMove, false, { noCoords: true }),
      el("div", { class: "last" }, el("span", { class: "label", text: "last move" }),
        el("span", { class: "move", text: lastMoveText(p) || "\u2014" })));
    c.append(body);
    for (const a of al) {
      c.append(el("div", { class: "alert " + a.level }, el("strong", { text: a.title }),
        el("span", { text: a.detail })));
    }
    return c;
  }

  function boardPage() {
    const id = idFromPath("/board/");
    const root = document.getElementById("board");
    document.title = id + " \u2014 eboardd";
    start(id, () => {
      root.replaceChildren();
      const b = boards.get(id);
      if (!b) {
        root.append(el("p", { class: "empty", text: `Waiting for board \u201C${id}\u201D\u2026` }));
        banner(root);
        return;
      }
      const p = b.props, pl = players(p), al = alerts(b);
      root.append(el("header", { class: "hall-head" },
        el("a", { href: "/", class: "back", text: "\u2190 hall" }),
        el("h1", { text: (Number(p.Number) > 0 ? "Table " + p.Number + " \u2014 " : "") + (p.Name || id) }),
        el("span", { class: "summary", text: rulesText(p) })));
      for (const a of al) {
        root.append(el("div", { class: "alert big " + a.level }, el("strong", { text: a.title }),
          el("span", { text: a.detail })));
      }
      const side = el("section", { class: "side" });
      const plate = (s) => el("div", { class: "player " + s + (p.Turn === s && p.State === "playing" ? " to-move" : "") },
        el("span", { class: "name", text: s === "white" ? pl.white : pl.black }),
        boardClock(id, b, s));
      side.append(plate("black"), plate("white"));
      side.append(el("div", { class: "facts" },
        fact("State", stateText(p)), fact("Result", resultText(p) || "*"),
        fact("To move", p.Turn || ""),
        fact("Illegal moves", `White ${(p.IllegalMoves || [0, 0])[0]} \u00B7 Black ${(p.IllegalMoves || [0, 0])[1]}`),
        fact("Board", (p.Connected ? "connected" : "disconnected") + modelText(p)),
        battery(p) ? fact("Battery", `${battery(p).percent}%${battery(p).charging ? ", charging" : ""}`) : null,
        fact("Clock", p.ClockConnected ? "connected" + clockModelText(p) : hasClock(p) ? "disconnected" : "none")));
      const claims = p.Claims || [];
      side.append(el("h2", { text: "Claims" }));
      const cl = el("ul", { class: "claims" });
      for (const [player, kind, detail] of claims) {
        cl.append(el("li", { text: `${cap(player)}: ${kind.replace(/-/g, " ")}${detail ? " \u2014 " + detail : ""}` }));
      }
      if (!claims.length) cl.append(el("li", { class: "none", text: "none available" }));
      side.append(cl);
      side.append(el("h2", { text: "Moves" }), movesTable(p.Moves || []));
      side.append(el("p", { class: "links" },
        el("a", { href: "/pgn/" + encodeId(id) + ".pgn", text: "PGN" }),
        el("a", { href: "/overlay/" + encodeId(id), text: "overlay" })));
      const boardBox = el("section", { class: "main-board" }, diagram(p.Fen, b.lastMove, false));
      // What stands on the board when it differs from the game, next to the clocks where the
      // arbiter looks first, with the differing squares marked.
      if (p.InSync === false && p.Placement) {
        side.insertBefore(el("div", { class: "sensed-box" },
          el("h2", { text: "On the board now (sensors)" }),
          el("div", { class: "sensed" }, diagram(p.Placement, null, false, { against: p.Fen }))),
        side.querySelector(".facts"));
      }
      root.append(el("div", { class: "layout" }, boardBox, side));
      banner(root);
    });
  }

  function encodeId(id) { return id.split("/").map(encodeURIComponent).join("/"); }

  function fact(k, v) {
    return el("div", { class: "fact" }, el("span", { class: "k", text: k }), el("span", { class: "v", text: v }));
  }

  function movesTable(moves) {
    const t = el("ol", { class: "moves" });
    for (let i = 0; i < moves.length; i += 2) {
      t.append(el("li", {}, el("span", { class: "w", text: moves[i] }),
        el("span", { class: "b", text: moves[i + 1] || "" })));
    }
    return t;
  }

  function overlay() {
    const id = idFromPath("/overlay/");
    const flip = new URLSearchParams(location.search).get("flip") === "1";
    const root = document.getElementById("overlay");
    start(id, () => {
      root.replaceChildren();
      const b = boards.get(id);
      if (!b) return;
      const p = b.props, pl = players(p);
      const plate = (s) => el("div", { class: "plate " + s + (p.Turn === s && p.State === "playing" ? " to-move" : "") },
        el("span", { class: "name", text: s === "white" ? pl.white : pl.black }),
        el("span", { class: "elo", text: s === "white" ? pl.whiteElo : pl.blackElo }),
        boardClock(id, b, s));
      const top = flip ? "white" : "black", bottom = flip ? "black" : "white";
      const res = resultText(p);
      root.append(el("div", { class: "ov" },
        el("div", { class: "ov-board" }, diagram(p.Fen, b.lastMove, flip)),
        el("div", { class: "ov-side" }, plate(top),
          el("div", { class: "ov-mid" },
            el("span", { class: "move", text: lastMoveText(p) }),
            res ? el("span", { class: "result", text: res }) : null),
          plate(bottom))));
    });
  }

  return { hall, board: boardPage, overlay, _alerts: alerts, _formatClock: formatClock };
})();
