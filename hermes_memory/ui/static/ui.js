// The memory browser's only script (served from this origin; the CSP allows no other).
// A write form is sent once: its button is disabled after the first submit.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (form && form.classList && form.classList.contains("write")) {
    var buttons = form.querySelectorAll("button");
    window.setTimeout(function () {
      for (var i = 0; i < buttons.length; i++) { buttons[i].disabled = true; }
    }, 0);
  }
});
