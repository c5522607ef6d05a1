// elicitkit's web inbox, live: the server's event stream says when this person's questions change, and the
// list is fetched again and merged into the page. Questions already on the page keep their elements, so a
// form someone is filling in is never replaced; questions that left are removed, new ones are inserted.
// Without this script the page still works: a reload shows the current list.
(function () {
  "use strict";
  var list = document.getElementById("inbox-list");
  if (!list || !window.EventSource || !window.fetch || !window.DOMParser) {
    return;
  }
  var busy = false;
  var again = false;

  function merge(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html").body;
    var wanted = Array.prototype.filter.call(fresh.children, function (node) { return node.id; });
    var ids = {};
    wanted.forEach(function (node) { ids[node.id] = true; });
    Array.prototype.slice.call(list.children).forEach(function (node) {
      if (!ids[node.id]) {
        node.remove();
      }
    });
    var previous = null;
    wanted.forEach(function (node) {
      var kept = document.getElementById(node.id);
      if (kept && kept.parentNode === list) {
        previous = kept;
        return;
      }
      var added = document.importNode(node, true);
      list.insertBefore(added, previous ? previous.nextSibling : list.firstChild);
      previous = added;
    });
    var count = list.querySelectorAll("section.question").length;
    // A page that shows a refused answer's error summary keeps saying so in its title.
    var prefix = document.getElementById("error-summary") ? "Error: " : "";
    document.title = prefix + (count ? "Your questions (" + count + ")" : "Your questions");
    list.dispatchEvent(new CustomEvent("inbox:updated", { detail: { count: count } }));
  }

  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    fetch(list.dataset.src, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) {
          throw new Error("inbox list: HTTP " + response.status);
        }
        return response.text();
      })
      .then(merge)
      .catch(function (error) {
        console.warn(error);
      })
      .finally(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  var events = new EventSource(list.dataset.events);
  // `ready` comes once the stream listens (and again after each reconnection): catch up on what it missed.
  events.addEventListener("ready", refresh);
  events.addEventListener("changed", refresh);
  window.addEventListener("pagehide", function () { events.close(); });
})();
