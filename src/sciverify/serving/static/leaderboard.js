// Leaderboard page: sort by a column heading, filter rows by team or system. Plain DOM, no build step.
// Without JavaScript the table is the server's ranking, complete and readable.
"use strict";

(function () {
  const table = document.getElementById("board");
  if (!table) return;
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const filter = document.getElementById("board-filter");
  const count = document.getElementById("board-count");
  const empty = document.getElementById("board-empty");
  const headers = Array.from(table.tHead.querySelectorAll("th"));

  function value(row, key, type) {
    const raw = row.getAttribute("data-" + key) || "";
    return type === "num" ? parseFloat(raw) : raw.toLocaleLowerCase();
  }

  function sortBy(button) {
    const th = button.closest("th");
    const key = button.dataset.key;
    const type = button.dataset.type;
    // First click: figures best first, rank and text ascending; a second click reverses.
    const natural = type === "num" && key !== "rank" ? "descending" : "ascending";
    const current = th.getAttribute("aria-sort");
    const order = current === natural ? (natural === "ascending" ? "descending" : "ascending") : natural;
    const sign = order === "ascending" ? 1 : -1;
    const sorted = rows.slice().sort((a, b) => {
      const x = value(a, key, type);
      const y = value(b, key, type);
      if (x < y) return -sign;
      if (x > y) return sign;
      return value(a, "rank", "num") - value(b, "rank", "num");
    });
    for (const h of headers) h.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", order);
    body.replaceChildren(...sorted);
  }

  for (const button of table.tHead.querySelectorAll("button[data-key]")) {
    button.addEventListener("click", () => sortBy(button));
  }

  function applyFilter() {
    const needle = filter.value.trim().toLocaleLowerCase();
    let shown = 0;
    for (const row of rows) {
      const text = (row.dataset.team + " " + row.dataset.system).toLocaleLowerCase();
      const match = !needle || text.includes(needle);
      row.hidden = !match;
      if (match) shown += 1;
    }
    count.textContent = needle ? shown + " of " + rows.length + " shown" : "";
    empty.hidden = shown > 0;
  }

  if (filter) filter.addEventListener("input", applyFilter);
})();
