// Live updates (plain JavaScript, no dependencies): the page's event stream (data-stream
// on this script) says when what the page shows changed; the page then fetches itself and
// swaps in its parts marked data-live (by id), or its whole <main>. A replay of a match in
// play (data-replay) takes the newly written moves, and opens the whole replay once the
// match is over. Without JavaScript (or EventSource) the page is as it was served.
(function () {
  "use strict";
  const script = document.currentScript;
  if (!script || !window.EventSource || !window.fetch || !window.DOMParser) return;
  const stream = script.dataset.stream;
  const replay = script.dataset.replay;
  const source = new EventSource(stream + "?since=" + encodeURIComponent(script.dataset.since || ""));
  const MIN_GAP_MS = 2000; // one refresh in two seconds at most, however many changes come
  const SPREAD_MS = 1000; // and up to a second later, so that many readers do not ask at once
  let busy = false;
  let again = false;
  let last = 0;

  // The fresh page's nodes replace only those that differ (a row whose numbers moved, not
  // the links beside them), so what the reader is about to click stays where it is.
  const adopt = (node) => document.adoptNode(node);
  function sameShell(old, next) {
    return old.nodeType === 1 && next.nodeType === 1 && old.tagName === next.tagName &&
      old.attributes.length === next.attributes.length &&
      Array.from(next.attributes).every((a) => old.getAttribute(a.name) === a.value);
  }
  function patch(old, next) {
    const mine = Array.from(old.childNodes);
    const theirs = Array.from(next.childNodes);
    if (mine.length !== theirs.length) { old.replaceChildren(...theirs.map(adopt)); return; }
    mine.forEach((node, at) => {
      const other = theirs[at];
      if (node.isEqualNode(other)) return;
      if (sameShell(node, other)) patch(node, other);
      else node.replaceWith(adopt(other));
    });
  }
  function swap(fresh) {
    const parts = document.querySelectorAll("[data-live][id]");
    const pairs = parts.length
      ? Array.from(parts, (part) => [part, fresh.getElementById(part.id)])
      : [[document.querySelector("main"), fresh.querySelector("main")]];
    for (const [part, next] of pairs) if (part && next) patch(part, next);
  }

  async function refresh() {
    if (busy) { again = true; return; }
    const wait = last + MIN_GAP_MS + Math.random() * SPREAD_MS - Date.now();
    if (wait > 0) { busy = true; setTimeout(() => { busy = false; refresh(); }, wait); return; }
    busy = true;
    last = Date.now();
    try {
      if (replay) await moreMoves(); else await refetch();
    } catch (error) {
      // The next change tries again.
    }
    busy = false;
    if (again) { again = false; refresh(); }
  }

  async function refetch() {
    const answer = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
    if (!answer.ok || answer.redirected) return;
    swap(new DOMParser().parseFromString(await answer.text(), "text/html"));
    document.documentElement.dataset.liveUpdates = String(Number(document.documentElement.dataset.liveUpdates || 0) + 1);
  }

  async function moreMoves() {
    const answer = await fetch("/live/replays/" + encodeURIComponent(replay) + ".json",
                               { credentials: "same-origin", cache: "no-store" });
    if (!answer.ok) return;
    const found = await answer.json();
    const shown = window.arenaReplay;
    if (found.over || !shown || !shown.rounds || !shown.rounds.length) { location.reload(); return; }
    window.dispatchEvent(new CustomEvent("arena-replay-data", { detail: found.data }));
  }

  source.addEventListener("change", refresh);
  source.addEventListener("moves", refresh);
})();
