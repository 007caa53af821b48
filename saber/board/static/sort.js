document.querySelectorAll("table.sortable").forEach((table) => {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, column) => {
    const button = document.createElement("button");
    button.type = "button";
    button.append(...th.childNodes);
    th.append(button);
    button.addEventListener("click", () => {
      const down = th.getAttribute("aria-sort") === "ascending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      const key = (row) => {
        const cell = row.cells[column];
        const text = cell.dataset.sort ?? cell.textContent.trim();
        return text === "" ? null : isNaN(text) ? text.toLowerCase() : Number(text);
      };
      const rows = [...table.tBodies[0].rows].map((row) => [key(row), row]);
      rows.sort(([a], [b]) => (a === null) - (b === null) || (a === null ? 0 :
        (a < b ? -1 : a > b ? 1 : 0) * (down ? -1 : 1)));
      rows.forEach(([, row]) => table.tBodies[0].append(row));
    });
  });
});
