// The replay viewer: rebuilds the table step by step from the match's events, across all
// rounds, from everyone's view or from one seat's (its hand, what it was asked, its legal
// options, its answer and who made the move). Plain JavaScript, no dependencies. The data
// comes from replays/<match>.js (window.arenaReplay), loaded by the page beside this
// script: a script file rather than fetch() of JSON, so that the pages work from disk.
// A match in play (the league server's live view) shows its hidden cards face down (-1),
// and more of its moves come as an "arena-replay-data" event on the window.
(function () {
  "use strict";
  const message = document.getElementById("replay-message");
  let data = window.arenaReplay;
  if (!data || !data.rounds || !data.rounds.length) {
    message.textContent = data && data.live
      ? "The match has just begun: its moves show here as soon as its referee writes them."
      : "The replay's data did not load (replays/<match>.js is missing).";
    message.hidden = false;
    return;
  }
  document.getElementById("replay").hidden = false;
  const COLOURS = ["red", "yellow", "green", "blue", "wild"];
  const SYMBOLS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "⊘", "⇄", "+2"];
  const WORDS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "Skip", "Reverse", "Draw Two"];
  const SOURCES = { bot: "the bot", default: "default: the referee, after a fault",
                    autopilot: "autopilot: the referee, after disqualification",
                    "in-process": "a built-in policy" };
  const players = data.players;
  let decisions = data.decisions || [];
  const deck = data.deck || 108; // 112 with the +10 cards of the draw_ten variant (§28)
  const STEP_MS = 700;

  const colourOf = (card) => (card >= 52 ? 4 : Math.floor(card / 13));
  function cardWords(card) {
    if (card === 52) return "Wild";
    if (card === 53) return "Wild Draw Four";
    if (card === 54) return "+10";
    return COLOURS[colourOf(card)] + " " + WORDS[card % 13];
  }
  function cardElement(card) {
    const chip = document.createElement("span");
    if (card < 0) {
      chip.className = "card card-down";
      chip.textContent = "?";
      chip.title = "a card not shown";
      chip.setAttribute("aria-label", "a card not shown");
      return chip;
    }
    chip.className = "card card-" + COLOURS[colourOf(card)];
    chip.textContent = card === 52 ? "W" : card === 53 ? "+4" : card === 54 ? "+10"
      : SYMBOLS[card % 13];
    chip.title = cardWords(card);
    chip.setAttribute("aria-label", cardWords(card));
    return chip;
  }

  // One snapshot per step: the state after that step's event.
  function snapshots(round) {
    const state = { hands: players.map(() => []), top: null, colour: null, direction: 1,
                    discard: 0 };
    const out = [];
    for (const step of round.steps) {
      switch (step.e) {
        case "RoundStarted":
          state.hands = players.map(() => []); state.top = null; state.colour = null;
          state.direction = 1; state.discard = 0; break;
        case "Dealt": state.hands[step.s] = step.cs.slice(); break;
        case "FirstCardTurned":
          state.top = step.c; state.discard = 1;
          state.colour = colourOf(step.c) < 4 ? colourOf(step.c) : null; break;
        case "Played": {
          const hand = state.hands[step.s];
          const at = hand.indexOf(step.c) >= 0 ? hand.indexOf(step.c) : hand.indexOf(-1);
          if (at >= 0) hand.splice(at, 1);
          state.top = step.c; state.discard += 1;
          if (step.c < 52) state.colour = colourOf(step.c);
          break;
        }
        case "Drew": state.hands[step.s].push(...step.cs); break;
        case "Reshuffled": state.discard = 1; break;
        case "ColourChosen": state.colour = step.k; break;
        // The house rules (§21-§32): hands that move, and a colour that moves on its own.
        case "HandsSwapped":
          state.hands[step.s] = step.cs.slice(); state.hands[step.o] = step.ocs.slice(); break;
        case "HandsPassed": state.hands = step.hs.map((hand) => hand.slice()); break;
        case "CardsExchanged": {
          const give = (seat, card) => {
            const at = state.hands[seat].indexOf(card);
            if (at >= 0) state.hands[seat].splice(at, 1);
          };
          give(step.s, step.cs[0]); give(step.o, step.ocs[0]);
          state.hands[step.s].push(step.ocs[0]); state.hands[step.o].push(step.cs[0]);
          break;
        }
        case "ColourAdvanced": state.colour = step.k; break;
        case "DirectionChanged": state.direction = step.d; break;
        default: break;
      }
      const held = state.hands.reduce((sum, hand) => sum + hand.length, 0);
      out.push({ hands: state.hands.map((hand) => hand.slice().sort((a, b) => a - b)),
                 top: state.top, colour: state.colour, direction: state.direction,
                 discard: state.discard,
                 // A reshuffle in the middle of a draw is logged before that draw's cards:
                 // its own count is the new pile's size.
                 draw: step.e === "Reshuffled" ? step.cs
                   : state.top === null ? deck - held : deck - held - state.discard,
                 actor: step.s === undefined ? -1 : step.s, step: step });
    }
    return out;
  }

  // The whole match as one timeline: every round's frames one after another.
  const frames = [];
  const roundStart = new Map(); // round number -> index of its first frame
  function build() {
    frames.length = 0;
    roundStart.clear();
    for (const round of data.rounds) {
      roundStart.set(round.number, frames.length);
      snapshots(round).forEach((frame, at) => {
        frame.round = round.number; frame.inRound = at; frame.roundSize = round.steps.length;
        frames.push(frame);
      });
    }
  }
  build();

  const $ = (id) => document.getElementById(id);
  const select = $("round-select");
  const seatSelect = $("seat-select");
  const slider = $("timeline");
  const playButton = $("play");
  const speed = $("speed");
  const view = {
    text: $("event-text"), moved: $("moved-by"), top: $("top-card"), colour: $("colour"),
    direction: $("direction"), draw: $("draw-size"), discard: $("discard-size"),
    latency: $("latency"), hands: $("hands"), position: $("position"),
    seatView: $("seat-view"), seatTitle: $("seat-view-title"), asked: $("view-asked"),
    hand: $("view-hand"), legal: $("view-legal"), answer: $("view-answer"),
    source: $("view-source"), time: $("view-time"), stderrBox: $("stderr-box"),
    stderrTitle: $("stderr-title"), stderr: $("stderr"),
  };
  slider.max = String(frames.length - 1);
  let index = 0;
  let seat = null; // null: every hand; else the seat whose view is shown
  let timer = null;

  // The faults on the timeline: each mark placed where its step is.
  for (const mark of document.querySelectorAll("#marks .mark")) {
    const at = parseHash("#" + mark.dataset.anchor);
    if (at && at.frame !== null) {
      mark.style.left = (100 * at.frame / Math.max(1, frames.length - 1)) + "%";
    }
  }

  function badge(text, bad) {
    const span = document.createElement("span");
    span.className = bad ? "badge bad" : "badge";
    span.textContent = text;
    return span;
  }

  function showDecision(frame) {
    const at = frame.step.dv;
    const decision = at === undefined ? null : decisions[at];
    if (decision === null || (seat !== null && decision.s !== seat)) {
      view.seatView.hidden = true;
      return;
    }
    view.seatView.hidden = false;
    view.seatTitle.textContent = "Seat " + decision.s + " (" + players[decision.s] + ")'s decision";
    if (decision.k === undefined) {
      view.asked.textContent = decision.src === "bot" || decision.src === "default"
        ? "(this log does not keep the request)" : "nothing: no request was sent";
      view.hand.textContent = "—";
      view.legal.replaceChildren();
      view.answer.textContent = decision.src === "bot" ? decision.a : "—";
    } else {
      view.asked.textContent = decision.k + " (request " + decision.r + "; top card " +
        decision.top + "; hand sizes " + decision.sizes.join(" / ") + ")";
      view.hand.textContent = decision.h.join(" ");
      view.legal.replaceChildren(...decision.lg.map((name) => {
        const item = document.createElement("li");
        item.textContent = name;
        if (name === decision.a || name + " uno" === decision.a) {
          item.className = "chosen";
          item.append(" ", badge("the move made", false));
        }
        return item;
      }));
      view.answer.textContent = decision.ans;
    }
    const moved = SOURCES[decision.src] || decision.src;
    view.source.replaceChildren(badge(decision.src, decision.src !== "bot" &&
                                      decision.src !== "in-process"),
                                " " + moved + ": " + decision.a);
    const parts = [];
    if (decision.l !== undefined) {
      parts.push(decision.l.toFixed(1) + " ms of a " + (decision.dl || data.deadline_ms || "?") +
                 " ms deadline");
    }
    if (decision.b !== undefined) parts.push("time bank left " + (decision.b / 1000).toFixed(2) + " s");
    view.time.textContent = parts.length ? parts.join("; ") : "—";
  }

  function show() {
    const frame = frames[index];
    const step = frame.step;
    view.text.textContent = seat !== null && step.tv ? step.tv[seat] : step.t;
    const decision = step.dv === undefined ? null : decisions[step.dv];
    view.moved.replaceChildren(...(decision && (decision.src === "default" ||
      decision.src === "autopilot") ? [badge(decision.src, true)] : []));
    view.top.replaceChildren(...(frame.top === null ? [] : [cardElement(frame.top)]));
    view.top.dataset.card = frame.top === null ? "" : cardWords(frame.top);
    view.colour.textContent = frame.colour === null ? "—" : COLOURS[frame.colour];
    view.colour.className = frame.colour === null ? "" : "swatch swatch-" + COLOURS[frame.colour];
    view.direction.textContent = frame.direction > 0 ? "↻ clockwise" : "↺ counter-clockwise";
    view.draw.textContent = String(frame.draw);
    view.discard.textContent = String(frame.discard);
    view.latency.textContent = step.l === undefined ? "—" : step.l.toFixed(1) + " ms";
    view.position.textContent = "round " + frame.round + ", step " + (frame.inRound + 1) +
      " of " + frame.roundSize + " (" + (index + 1) + " of " + frames.length + " in the match)";
    select.value = String(frame.round);
    slider.value = String(index);
    slider.setAttribute("aria-valuetext", view.position.textContent);
    const items = frame.hands.map((hand, who) => {
      const item = document.createElement("li");
      item.className = who === frame.actor ? "hand acting" : "hand";
      if (who === frame.actor) item.setAttribute("aria-current", "true");
      const name = document.createElement("span");
      name.className = "who";
      name.textContent = "Seat " + who + " · " + players[who] + " (" + hand.length + ")";
      const cards = document.createElement("span");
      cards.className = "cards";
      if (seat === null || who === seat) cards.append(...hand.map(cardElement));
      else cards.append(badge(hand.length + " cards, hidden from seat " + seat, false));
      item.append(name, cards);
      return item;
    });
    view.hands.replaceChildren(...items);
    showDecision(frame);
  }

  function hashFor() {
    const frame = frames[index];
    return "#" + (seat === null ? "" : "seat-" + seat + "-") + "round-" + frame.round +
      "-step-" + (frame.inRound + 1);
  }

  function go(to, updateHash = true) {
    index = Math.max(0, Math.min(frames.length - 1, to));
    show();
    if (updateHash) history.replaceState(null, "", hashFor());
  }

  // #round-R, #round-R-step-S, #seat-N, #seat-N-round-R-step-S; null when it is none of
  // these; frame null (with why) when it names what the match does not have.
  function parseHash(hash) {
    const found = /^#(?:seat-(\d+))?-?(?:round-(\d+)(?:-step-(\d+))?)?$/.exec(hash);
    if (!found || hash === "#" || hash === "") return null;
    const out = { seat: found[1] === undefined ? null : Number(found[1]), frame: 0, why: "" };
    if (out.seat !== null && out.seat >= players.length) {
      out.why = "This match has no seat " + out.seat + " (seats 0 to " + (players.length - 1) + ")";
      out.seat = null;
    }
    if (found[2] !== undefined) {
      const number = Number(found[2]);
      const first = roundStart.get(number);
      const numbers = data.rounds.map((r) => r.number);
      if (first === undefined) {
        out.why = "This match has no round " + number + " (rounds " + numbers[0] + " to " +
          numbers[numbers.length - 1] + ")";
        out.frame = null;
      } else {
        const size = frames[first].roundSize;
        const stepNumber = found[3] === undefined ? 1 : Number(found[3]);
        if (stepNumber < 1 || stepNumber > size) {
          out.why = "Round " + number + " has no step " + stepNumber + " (steps 1 to " + size + ")";
          out.frame = null;
        } else {
          out.frame = first + stepNumber - 1;
        }
      }
    }
    return out;
  }

  function openHash() {
    const at = parseHash(location.hash);
    message.hidden = true;
    if (location.hash && location.hash !== "#" && at === null) {
      message.textContent = "The link's step (" + location.hash + ") is not one this viewer " +
        "knows (it takes #round-5 or #round-5-step-23): showing the start of the match.";
      message.hidden = false;
    }
    if (at === null) { go(data.live ? frames.length - 1 : 0, false); return; } // in play: the newest
    if (at.why) {
      message.textContent = at.why + ": showing " + (at.frame === null
        ? "the start of the match instead." : "every hand instead.");
      message.hidden = false;
    }
    seat = at.seat;
    seatSelect.value = seat === null ? "all" : String(seat);
    showStderr();
    go(at.frame === null ? 0 : at.frame, false);
  }

  function showStderr() {
    const text = seat === null || !data.stderr ? null : data.stderr[seat];
    view.stderrBox.hidden = seat === null;
    view.stderrTitle.textContent = seat === null ? "stderr"
      : "Seat " + seat + " (" + players[seat] + "): the end of its stderr";
    view.stderr.textContent = text === null || text === undefined
      ? "(no stderr kept for this seat: bots in-process, or a log without its bot output)"
      : text || "(empty)";
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    playButton.textContent = "▶ Play";
    playButton.setAttribute("aria-pressed", "false");
  }
  function play() {
    if (index >= frames.length - 1) go(0);
    timer = setInterval(() => {
      if (index >= frames.length - 1) { stop(); return; }
      go(index + 1);
    }, STEP_MS / Number(speed.value));
    playButton.textContent = "❚❚ Pause";
    playButton.setAttribute("aria-pressed", "true");
  }

  const roundEdge = (last) => {
    const frame = frames[index];
    return index - frame.inRound + (last ? frame.roundSize - 1 : 0);
  };
  $("first").addEventListener("click", () => go(roundEdge(false)));
  $("last").addEventListener("click", () => go(roundEdge(true)));
  $("prev").addEventListener("click", () => go(index - 1));
  $("next").addEventListener("click", () => go(index + 1));
  playButton.addEventListener("click", () => (timer === null ? play() : stop()));
  speed.addEventListener("change", () => { if (timer !== null) { stop(); play(); } });
  slider.addEventListener("input", () => go(Number(slider.value)));
  select.addEventListener("change", () => go(roundStart.get(Number(select.value))));
  seatSelect.addEventListener("change", () => {
    seat = seatSelect.value === "all" ? null : Number(seatSelect.value);
    showStderr();
    go(index);
  });
  window.addEventListener("hashchange", openHash);
  // More of a match in play: the viewer on its last step follows on to the newest.
  window.addEventListener("arena-replay-data", (event) => {
    if (!event.detail || !event.detail.rounds || !event.detail.rounds.length) return;
    const following = index >= frames.length - 1 && timer === null;
    data = event.detail;
    decisions = data.decisions || [];
    build();
    select.replaceChildren(...data.rounds.map((round) =>
      new Option(String(round.number), String(round.number))));
    slider.max = String(frames.length - 1);
    go(following ? frames.length - 1 : index, following);
  });
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    // Left and right step, also from the menus (a menu's own arrow keys would switch
    // rounds or seats under the reader); up and down keep choosing in a menu, and the
    // slider keeps all its keys.
    if (target instanceof HTMLInputElement || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowRight") { go(index + 1); event.preventDefault(); }
    else if (event.key === "ArrowLeft") { go(index - 1); event.preventDefault(); }
    else if (target instanceof HTMLSelectElement) return;
    else if (event.key === "Home") { go(roundEdge(false)); event.preventDefault(); }
    else if (event.key === "End") { go(roundEdge(true)); event.preventDefault(); }
  });
  showStderr();
  openHash();
})();
