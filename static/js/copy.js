// Copy buttons: <button data-copy="ID"> copies the value (or text) of #ID.
// Shown only where this script runs; without it the field stays selectable.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button[data-copy]").forEach(function (b) { b.hidden = false; });
  });
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("button[data-copy]");
    if (!button) return;
    var field = document.getElementById(button.dataset.copy);
    if (!field) return;
    var text = field.value !== undefined ? field.value : field.textContent;
    var status = document.getElementById("copy-status");
    function done(ok) {
      if (status) status.textContent = ok ? "Copied to the clipboard." : "Select the token and copy it (Ctrl+C).";
      if (!ok && field.select) field.select();
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
    } else {
      if (field.select) field.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (err) { ok = false; }
      done(ok);
    }
  });
})();
