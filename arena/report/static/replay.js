// The replay viewer: rebuilds each round's table from the match's events, step by step.
// Plain JavaScript, no dependencies; the data is embedded in the page (works offline).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const COLOURS = ["red", "yellow", "green", "blue", "wild"];
  const SYMBOLS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "⊘", "⇄", "+2"];
  const WORDS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "Skip", "Reverse", "Draw Two"];
  const players = data.players;

  const colourOf = (card) => (card >= 52 ? 4 : Math.floor(card / 13));
  function cardWords(card) {
    if (card === 52) return "Wild";
    if (card === 53) return "Wild Draw Four";
    return COLOURS[colourOf(card)] + " " + WORDS[card % 13];
  }
  function cardElement(card) {
    const chip = document.createElement("span");
    chip.className = "card card-" + COLOURS[colourOf(card)];
    chip.textContent = card === 52 ? "W" : card === 53 ? "+4" : SYMBOLS[card % 13];
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
          const at = hand.indexOf(step.c);
          if (at >= 0) hand.splice(at, 1);
          state.top = step.c; state.discard += 1;
          if (step.c < 52) state.colour = colourOf(step.c);
          break;
        }
        case "Drew": state.hands[step.s].push(...step.cs); break;
        case "Reshuffled": state.discard = 1; break;
        case "ColourChosen": state.colour = step.k; break;
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
                   : state.top === null ? 108 - held : 108 - held - state.discard,
                 actor: step.s === undefined ? -1 : step.s, text: step.t,
                 latency: step.l === undefined ? null : step.l });
    }
    return out;
  }

  const select = document.getElementById("round-select");
  const view = {
    text: document.getElementById("event-text"), top: document.getElementById("top-card"),
    colour: document.getElementById("colour"), direction: document.getElementById("direction"),
    draw: document.getElementById("draw-size"), discard: document.getElementById("discard-size"),
    latency: document.getElementById("latency"), hands: document.getElementById("hands"),
    position: document.getElementById("position"),
  };
  let frames = [];
  let index = 0;

  function show() {
    const frame = frames[index];
    view.text.textContent = frame.text;
    view.top.replaceChildren(...(frame.top === null ? [] : [cardElement(frame.top)]));
    view.top.dataset.card = frame.top === null ? "" : cardWords(frame.top);
    view.colour.textContent = frame.colour === null ? "—" : COLOURS[frame.colour];
    view.colour.className = frame.colour === null ? "" : "swatch swatch-" + COLOURS[frame.colour];
    view.direction.textContent = frame.direction > 0 ? "↻ clockwise" : "↺ counter-clockwise";
    view.draw.textContent = String(frame.draw);
    view.discard.textContent = String(frame.discard);
    view.latency.textContent = frame.latency === null ? "—" : frame.latency.toFixed(1) + " ms";
    view.position.textContent = "step " + (index + 1) + " of " + frames.length;
    const items = frame.hands.map((hand, seat) => {
      const item = document.createElement("li");
      item.className = seat === frame.actor ? "hand acting" : "hand";
      if (seat === frame.actor) item.setAttribute("aria-current", "true");
      const name = document.createElement("span");
      name.className = "who";
      name.textContent = "Seat " + seat + " · " + players[seat] + " (" + hand.length + ")";
      const cards = document.createElement("span");
      cards.className = "cards";
      cards.append(...hand.map(cardElement));
      item.append(name, cards);
      return item;
    });
    view.hands.replaceChildren(...items);
  }

  function openRound(number) {
    const round = data.rounds.find((r) => r.number === number) || data.rounds[0];
    select.value = String(round.number);
    frames = snapshots(round);
    index = 0;
    show();
  }

  function step(delta) {
    index = Math.max(0, Math.min(frames.length - 1, index + delta));
    show();
  }

  document.getElementById("first").addEventListener("click", () => { index = 0; show(); });
  document.getElementById("last").addEventListener("click", () => { index = frames.length - 1; show(); });
  document.getElementById("prev").addEventListener("click", () => step(-1));
  document.getElementById("next").addEventListener("click", () => step(1));
  select.addEventListener("change", () => {
    history.replaceState(null, "", "#round-" + select.value);
    openRound(Number(select.value));
  });
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLSelectElement) return;
    if (event.key === "ArrowRight") { step(1); event.preventDefault(); }
    else if (event.key === "ArrowLeft") { step(-1); event.preventDefault(); }
    else if (event.key === "Home") { index = 0; show(); event.preventDefault(); }
    else if (event.key === "End") { index = frames.length - 1; show(); event.preventDefault(); }
  });
  const fromHash = /^#round-(\d+)$/.exec(location.hash);
  openRound(fromHash ? Number(fromHash[1]) : data.rounds[0].number);
})();
