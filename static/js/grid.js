// The data grid's keyboard and selection: j/k or arrows move between rows
// (one row in the tab order at a time), x or Space selects the row, Enter
// opens it, "/" focuses the search, "b" goes to the bulk form. Without
// JavaScript every control is a plain form field or link.
(function () {
  "use strict";
  var grid = document.getElementById("grid");
  var bulk = document.getElementById("bulk");
  function rows() { return grid ? Array.prototype.slice.call(grid.tBodies[0].rows) : []; }
  function boxes() { return document.querySelectorAll('input[name="item"][form="bulk"]'); }
  function count() {
    var n = 0;
    boxes().forEach(function (b) { if (b.checked) n += 1; });
    var out = document.getElementById("selected-count");
    if (out) out.textContent = String(n);
    var all = document.getElementById("select-page");
    if (all) { all.checked = n > 0 && n === boxes().length; all.indeterminate = n > 0 && n < boxes().length; }
  }
  function focusRow(row) {
    rows().forEach(function (r) { r.tabIndex = -1; });
    row.tabIndex = 0;
    row.focus();
  }
  function isTyping(el) {
    var tag = el && el.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && !/^(checkbox|radio)$/.test(el.type));
  }
  function showActionFields() {
    if (!bulk) return;
    var action = bulk.querySelector('select[name="action"]').value;
    bulk.querySelectorAll("[data-for]").forEach(function (f) {
      f.hidden = f.getAttribute("data-for").split(" ").indexOf(action) < 0;
    });
  }
  document.addEventListener("change", function (e) {
    if (e.target.id === "select-page") {
      boxes().forEach(function (b) { b.checked = e.target.checked; });
    }
    if (e.target.name === "action") showActionFields();
    count();
  });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey || e.ctrlKey) return;
    if (isTyping(e.target)) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    var list = rows();
    var current = e.target.closest ? e.target.closest("#grid tbody tr") : null;
    var i = current ? list.indexOf(current) : -1;
    switch (e.key) {
      case "j": case "ArrowDown":
        if (!list.length) return;
        focusRow(list[Math.min(i + 1, list.length - 1)]); break;
      case "k": case "ArrowUp":
        if (!list.length) return;
        focusRow(list[Math.max(i - 1, 0)]); break;
      case "x": case " ":
        if (!current || e.target.tagName === "INPUT") return;
        var box = current.querySelector('input[name="item"]');
        box.checked = !box.checked; count(); break;
      case "Enter":
        if (!current || e.target !== current) return;
        window.location.href = current.getAttribute("data-href"); break;
      case "/":
        var q = document.getElementById("id_q");
        if (!q) return;
        q.focus(); q.select(); break;
      case "b":
        var action = bulk && bulk.querySelector('select[name="action"]');
        if (!action) return;
        action.focus(); break;
      default: return;
    }
    e.preventDefault();
  });
  showActionFields();
  count();
})();
