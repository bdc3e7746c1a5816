// Sortable and filterable tables (no library, no network): column headers of a
// table.sortable become buttons that sort its rows; a form.filters hides the rows of its
// table that do not match, and keeps its choices in the address (?bot=...&opponent=...),
// so a link can open a filtered list (head-to-head cells do). Rows carry what filters
// read in data-* attributes; a later paginated list can read the same fields from
// results.json.
(function () {
  "use strict";

  function cellValue(row, index, numeric) {
    const cell = row.children[index];
    if (!cell) return numeric ? -Infinity : "";
    const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    const value = parseFloat(raw.replace(/[^0-9.+\-eE]/g, ""));
    return Number.isNaN(value) ? -Infinity : value;
  }

  function makeSortable(table) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach(function (th, index) {
      if (!th.textContent.trim()) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const numeric = th.dataset.type === "number";
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          const x = cellValue(a, index, numeric);
          const y = cellValue(b, index, numeric);
          const order = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function matches(row, filters) {
    const bots = (row.dataset.bots || "").split(" ").filter(Boolean);
    const results = {};
    (row.dataset.results || "").split(" ").filter(Boolean).forEach(function (pair) {
      const cut = pair.indexOf(":");
      results[pair.slice(0, cut)] = pair.slice(cut + 1);
    });
    for (const [name, value] of Object.entries(filters)) {
      if (!value) continue;
      if (name === "bot" && row.dataset.bot !== undefined) {
        if (!row.dataset.bot.toLowerCase().includes(value.toLowerCase())) return false;
      } else if (name === "bot" || name === "opponent") {
        if (!bots.includes(value)) return false;
        if (name === "opponent" && filters.bot === value) return false;
      } else if (name === "round") {
        if (row.dataset.round !== value) return false;
      } else if (name === "result") {
        if (value === "failed" || value === "scheduled") {
          if (row.dataset.status !== value) return false;
        } else if (row.dataset.status !== "done") {
          return false;
        } else if (filters.bot) {
          const mine = results[filters.bot] || "";
          if (value === "lost" ? mine === "won" || mine === "tied" : mine !== value) return false;
        } else if (value === "tied" && !Object.values(results).includes("tied")) {
          return false;
        }
      } else if (name === "faults") {
        const faults = parseInt(row.dataset.faults || "0", 10);
        if (value === "with" ? faults === 0 : faults > 0) return false;
      }
    }
    return true;
  }

  function makeFilterable(form) {
    const table = document.getElementById(form.dataset.table);
    if (!table) return;
    const controls = Array.from(form.querySelectorAll("[data-filter]"));
    const shown = form.querySelector(".shown");
    const params = new URLSearchParams(window.location.search);
    controls.forEach(function (control) {
      const wanted = params.get(control.name);
      if (wanted !== null) control.value = wanted;
    });
    function apply() {
      const filters = {};
      controls.forEach(function (control) { filters[control.name] = control.value; });
      let visible = 0;
      const rows = Array.from(table.tBodies[0].rows);
      rows.forEach(function (row) {
        const keep = matches(row, filters);
        row.hidden = !keep;
        visible += keep ? 1 : 0;
      });
      if (shown) shown.textContent = visible + " of " + rows.length + " shown";
      const query = new URLSearchParams();
      controls.forEach(function (control) {
        if (control.value) query.set(control.name, control.value);
      });
      const search = query.toString();
      if (window.location.protocol !== "file:" || search !== window.location.search.slice(1)) {
        try {
          window.history.replaceState(null, "", search ? "?" + search : window.location.pathname);
        } catch (error) { /* some file:// pages refuse it: the filter still works */ }
      }
    }
    controls.forEach(function (control) {
      control.addEventListener("input", apply);
      control.addEventListener("change", apply);
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    apply();
  }

  function start() {
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    document.querySelectorAll("form.filters").forEach(makeFilterable);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
