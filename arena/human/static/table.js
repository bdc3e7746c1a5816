// The person's page: draws the table from the server's event stream (/events) and sends
// each choice to /act. Every move is a <button> with its words; colour is never the only cue.
"use strict";

(() => {
  const byId = (id) => document.getElementById(id);
  let request = null; // the decision asked, as the last state gave it
  let told = 0; // the story's lines shown, counted from the match's first

  const source = new EventSource("/events");
  source.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.first < told) { // a new stream after a reconnection: the story again
      byId("story").replaceChildren();
      told = data.first;
    }
    for (const line of data.lines.slice(told - data.first)) {
      byId("story").append(storyLine(line));
      byId("recent").append(storyLine(line));
    }
    told = Math.max(told, data.first + data.lines.length);
    draw(data.state);
  };
  source.onerror = () => {
    byId("status").textContent = "The page lost its connection to the table; retrying…";
  };

  function storyLine(line) {
    const item = document.createElement("li");
    item.textContent = line.text;
    item.className = line.kind + (line.mine ? " mine" : "");
    return item;
  }

  function cardElement(card, tag) {
    const element = document.createElement(tag);
    element.className = "card " + card.colour;
    element.textContent = card.words;
    return element;
  }

  function button(label, kind, action) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = "move " + kind;
    element.textContent = label;
    element.addEventListener("click", () => choose(action));
    return element;
  }

  function draw(state) {
    byId("status").textContent = state.problem ? "Problem: " + state.problem : state.status;
    if (state.table) drawTable(state.table);
    request = state.request;
    drawRequest(state, request);
    if (state.result) drawResult(state);
    if (state.status.startsWith("You left")) source.close();
  }

  function drawTable(table) {
    const top = byId("top");
    top.className = "card " + table.top.colour;
    top.textContent = table.top.words;
    byId("colour").textContent = table.colour === "wild" ? "none named yet" : table.colour;
    byId("colour").className = "colour-name " + table.colour;
    byId("direction").textContent = table.direction;
    byId("draw-pile").textContent = table.draw_pile;
    byId("round").textContent = table.round;
    const rows = table.seats.map((seat) => {
      const row = document.createElement("tr");
      if (seat.mine) row.className = "mine";
      for (const text of [seat.seat, seat.name + (seat.mine ? " (you)" : ""), seat.cards,
                          seat.score]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    });
    byId("seats").tBodies[0].replaceChildren(...rows);
  }

  function drawRequest(state, asked) {
    const table = state.table;
    const plays = new Map((asked ? asked.plays : []).map((play) => [play.card, play]));
    const cards = (table ? table.hand : []).map((card) => {
      const item = document.createElement("li");
      const play = plays.get(card.card);
      if (play) {
        const element = cardElement(card, "button");
        element.type = "button";
        element.setAttribute("aria-label", "Play " + card.words);
        element.addEventListener("click", () => {
          choose(byId("uno").checked ? play.uno : play.action);
        });
        item.append(element);
      } else {
        item.append(cardElement(card, "span"));
      }
      return item;
    });
    byId("hand").replaceChildren(...cards);
    byId("hand-size").textContent = cards.length === 1 ? "1 card" : cards.length + " cards";
    byId("uno-box").hidden = !(asked && asked.uno);
    if (!(asked && asked.uno)) byId("uno").checked = false;
    byId("prompt").textContent = asked ? asked.prompt : "Not your turn.";
    if (!asked && state.result) byId("prompt").textContent = "The match is over.";
    byId("moves").replaceChildren(...(asked ? asked.moves : []).map(
      (move) => button(move.label, move.kind, move.action)));
  }

  function drawResult(state) {
    byId("result").hidden = false;
    const result = state.result;
    byId("verdict").textContent = (result.you_won ? "You won" : "You did not win") +
      " after " + result.rounds + (result.rounds === 1 ? " round." : " rounds.");
    byId("standing").tBodies[0].replaceChildren(...result.standing.map((seat) => {
      const row = document.createElement("tr");
      if (seat.mine) row.className = "mine";
      for (const text of [seat.place, seat.seat, seat.name + (seat.mine ? " (you)" : ""),
                          seat.score]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }));
    if (state.replay) {
      byId("replay-link").href = state.replay;
      byId("replay").hidden = false;
    }
  }

  async function choose(action) {
    if (!request) return;
    const asked = request;
    request = null;
    for (const element of document.querySelectorAll("#moves button, #hand button")) {
      element.disabled = true;
    }
    byId("recent").replaceChildren();
    const response = await fetch("/act", {
      method: "POST", headers: {"content-type": "application/json"},
      body: JSON.stringify({request: asked.id, action: action}),
    });
    if (!response.ok) {
      const answer = await response.json().catch(() => ({error: response.statusText}));
      byId("status").textContent = "That move was not taken: " + answer.error;
    }
  }

  byId("leave").addEventListener("click", async () => {
    byId("leave").disabled = true;
    await fetch("/leave", {method: "POST", headers: {"content-type": "application/json"},
                           body: "{}"});
  });
})();
