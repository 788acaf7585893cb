// The compare page's pictures (issue 24), for items shown part by part:
// every picture of the item zooms and pans together (keys, buttons, wheel,
// drag), so that the same place of response A and B (and of an edit's
// input) is in view; two responses of pictures alone are drawn at one scale;
// "flicker" shows response A and B in turn in one place. work.js owns the
// keys and calls window.studioPictures; its init() calls reset() for each
// new item. The view is kept as fractions of each picture's box, so boxes
// of different sizes still show the same part of their picture.
(function () {
  "use strict";

  var view = { scale: 1, fx: 0, fy: 0, drag: null, side: "" };
  var MAX = 16;

  function work() { return document.getElementById("work"); }
  function layout() { var w = work(); return w ? w.dataset.layout || "" : ""; }
  function each(selector, fn) {
    var w = work();
    if (w) Array.prototype.forEach.call(w.querySelectorAll(selector), fn);
  }
  function clamp(v, lo, hi) { return Math.min(hi, Math.max(lo, v)); }

  function apply() {
    // A picture never leaves its box: at scale s its offset lies in [1 - s, 0].
    view.fx = clamp(view.fx, 1 - view.scale, 0);
    view.fy = clamp(view.fy, 1 - view.scale, 0);
    var t = view.scale === 1 ? "" :
      "translate(" + (view.fx * 100) + "%," + (view.fy * 100) + "%) scale(" + view.scale + ")";
    each(".pic img", function (img) { img.style.transform = t; });
    var w = work();
    if (!w) return;
    w.classList.toggle("pics-zoomed", view.scale > 1);
    var level = w.querySelector("#zoom-level");
    if (level) level.textContent = Math.round(view.scale * 100) + "%";
  }
  // Zoom by `factor` keeping the point at (u, v) of a box (fractions) still.
  function zoom(factor, u, v) {
    if (u === undefined) { u = 0.5; v = 0.5; }
    var next = clamp(view.scale * factor, 1, MAX);
    view.fx = u - (u - view.fx) * (next / view.scale);
    view.fy = v - (v - view.fy) * (next / view.scale);
    view.scale = next;
    if (next === 1) { view.fx = 0; view.fy = 0; }
    apply();
  }
  function fit() { view.scale = 1; view.fx = 0; view.fy = 0; apply(); }
  // Move the view by a share of a box (positive: towards the left or top edge).
  function pan(dx, dy) { view.fx += dx; view.fy += dy; apply(); }

  // One scale for the input and both responses: the largest that fits every
  // picture in its column and the column's pictures, one under the other, in
  // 62 % of the window's height (each at least 28 % of it).
  function sameScale() {
    var w = work();
    var row = w && w.querySelector(".responses.pictures");
    if (!row) return;
    var imgs = row.querySelectorAll(".input-card .pic img, .response .pic img");
    var f = Infinity, most = 1;
    row.querySelectorAll(".input-card, .response").forEach(function (column) {
      most = Math.max(most, column.querySelectorAll(".pic img").length);
    });
    var tall = Math.max(160, window.innerHeight * Math.max(0.28, 0.62 / most));
    Array.prototype.forEach.call(imgs, function (img) {
      var cell = img.closest("figure");
      var width = cell ? cell.clientWidth : 0;
      var iw = +img.getAttribute("width"), ih = +img.getAttribute("height");
      if (width > 0 && iw > 0 && ih > 0) f = Math.min(f, width / iw, tall / ih);
    });
    if (!isFinite(f)) return;
    row.querySelectorAll(".pic img").forEach(function (img) {
      img.style.width = Math.floor(+img.getAttribute("width") * f) + "px";
      img.style.height = Math.floor(+img.getAttribute("height") * f) + "px";
    });
  }

  // --- flicker ---------------------------------------------------------------
  function sideName(side) {
    var h = work().querySelector('.response[data-side="' + side + '"] h2');
    return h ? h.textContent : side;
  }
  function showSide(side) {
    var w = work();
    view.side = side;
    w.querySelectorAll("#flicker .flicker-pane").forEach(function (pane) {
      pane.hidden = pane.dataset.side !== side;
    });
    w.querySelector("#flicker-side").textContent = "Showing " + sideName(side);
    w.querySelectorAll(".response[data-side]").forEach(function (card) {
      card.toggleAttribute("data-flicker-shown", card.dataset.side === side);
    });
  }
  // First press: A and B in one place, A first; each further press switches.
  function flicker() {
    var w = work();
    var figure = w && w.querySelector("#flicker");
    if (!figure) return;
    if (!figure.hidden) { showSide(view.side === "left" ? "right" : "left"); return; }
    var frame = figure.querySelector(".flicker-frame");
    frame.textContent = "";
    ["left", "right"].forEach(function (side) {
      var pane = document.createElement("div");
      pane.className = "flicker-pane";
      pane.dataset.side = side;
      w.querySelectorAll('.response[data-side="' + side + '"] .pic').forEach(function (pic) {
        pane.appendChild(pic.cloneNode(true));  // same address: the decoded picture
      });
      frame.appendChild(pane);
    });
    figure.hidden = false;
    w.classList.add("flickering");
    setPressed(true);
    showSide("left");
    apply();
  }
  function sideBySide() {
    var w = work();
    var figure = w && w.querySelector("#flicker");
    if (!figure || figure.hidden) return false;
    figure.hidden = true;
    figure.querySelector(".flicker-frame").textContent = "";
    w.classList.remove("flickering");
    w.querySelectorAll(".response[data-flicker-shown]").forEach(function (card) {
      card.removeAttribute("data-flicker-shown");
    });
    view.side = "";
    setPressed(false);
    return true;
  }
  function setPressed(on) {
    var w = work();
    var button = w.querySelector('[data-action="flicker"]');
    if (button) button.setAttribute("aria-pressed", on ? "true" : "false");
    var back = w.querySelector('[data-action="side-by-side"]');
    if (back) back.hidden = !on;
  }

  // --- pointer -----------------------------------------------------------------
  function pictureAt(target) {
    return target.closest ? target.closest("#work .pic") : null;
  }
  // The wheel zooms over side-by-side pictures; among text it scrolls the
  // page unless the pictures are zoomed already.
  document.addEventListener("wheel", function (e) {
    var pic = pictureAt(e.target);
    if (!pic || (layout() === "parts" && view.scale === 1)) return;
    e.preventDefault();
    var r = pic.getBoundingClientRect();
    zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2, (e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height);
  }, { passive: false });
  document.addEventListener("pointerdown", function (e) {
    var pic = pictureAt(e.target);
    if (!pic || view.scale === 1 || e.button !== 0) return;
    var r = pic.getBoundingClientRect();
    view.drag = { x: e.clientX, y: e.clientY, fx: view.fx, fy: view.fy, w: r.width, h: r.height };
    work().classList.add("pics-dragging");
    if (e.target.setPointerCapture) e.target.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  document.addEventListener("pointermove", function (e) {
    var d = view.drag;
    if (!d) return;
    view.fx = d.fx + (e.clientX - d.x) / d.w;
    view.fy = d.fy + (e.clientY - d.y) / d.h;
    apply();
  });
  function endDrag() {
    view.drag = null;
    var w = work();
    if (w) w.classList.remove("pics-dragging");
  }
  document.addEventListener("pointerup", endDrag);
  document.addEventListener("pointercancel", endDrag);
  document.addEventListener("dblclick", function (e) { if (pictureAt(e.target)) fit(); });

  var resizing = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(sameScale, 100);
  });

  window.studioPictures = {
    // A new item: fitted, side by side, at one scale.
    reset: function () { view.drag = null; view.side = ""; fit(); sameScale(); },
    zoomIn: function () { zoom(1.25); },
    zoomOut: function () { zoom(0.8); },
    fit: fit,
    // Shift+arrow: the view moves a tenth of a box that way.
    pan: function (key) {
      var step = 0.1;
      if (key === "ArrowLeft") pan(step, 0);
      else if (key === "ArrowRight") pan(-step, 0);
      else if (key === "ArrowUp") pan(0, step);
      else if (key === "ArrowDown") pan(0, -step);
    },
    flicker: flicker,
    sideBySide: sideBySide,
    state: function () { return { scale: view.scale, fx: view.fx, fy: view.fy, side: view.side }; }
  };
})();
