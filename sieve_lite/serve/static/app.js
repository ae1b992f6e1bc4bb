// sieve-lite serve: the little script that enhances pages which work without it.
// No inline script anywhere (the CSP is script-src 'self'); text from the server is inserted
// only as HTML the server rendered and escaped (step and answer fragments), or as textContent.
"use strict";
(function () {
  // -- the as-you-type query check: the error and its column under the box ----------------
  const box = document.getElementById("q");
  const out = document.getElementById("q-error");
  if (box && out) {
    let timer = 0, seq = 0;
    const coll = document.getElementById("c");
    const check = function () {
      const mine = ++seq;
      const url = box.dataset.check + "?c=" + encodeURIComponent(coll ? coll.value : "all") +
        "&q=" + encodeURIComponent(box.value);
      fetch(url, {headers: {"Accept": "application/json"}}).then(function (r) {
        return r.json();
      }).then(function (data) {
        if (mine !== seq) return;
        out.textContent = "";
        box.removeAttribute("aria-invalid");
        if (data.ok) return;
        const e = data.error;
        box.setAttribute("aria-invalid", "true");
        const p = document.createElement("p");
        p.className = "msg";
        const strong = document.createElement("strong");
        strong.textContent = e.kind;
        p.append(strong, ": " + e.message + (e.column ? " (column " + e.column + ")" : ""));
        out.append(p);
        if (e.column) {
          const pre = document.createElement("pre");
          pre.className = "caret";
          pre.setAttribute("aria-hidden", "true");
          pre.textContent = e.query.replace(/\s/g, " ") + "\n" +
            " ".repeat(e.column - 1) + "^".repeat(e.length || 1);
          out.append(pre);
        }
      }).catch(function () { /* the check is a courtesy: the search still reports */ });
    };
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(check, 150);
    });
  }

  // -- keyboard: / search, j/k cards, Enter opens (a focused link), Esc stops a run -------
  const typing = function (el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" ||
                  el.tagName === "SELECT" || el.isContentEditable);
  };
  let current = -1;
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "Escape") {
      const stop = document.getElementById("stop");
      if (stop && !stop.disabled) { ev.preventDefault(); stop.click(); }
      return;
    }
    if (typing(document.activeElement)) return;
    if (ev.key === "/") {
      const q = document.getElementById("q") || document.getElementById("question");
      if (q) { ev.preventDefault(); q.focus(); q.select(); }
    } else if (ev.key === "j" || ev.key === "k") {
      const cards = Array.from(document.querySelectorAll("article[data-card]"));
      if (!cards.length) return;
      const at = cards.findIndex(function (c) { return c.contains(document.activeElement); });
      if (at >= 0) current = at;
      current = ev.key === "j" ? Math.min(current + 1, cards.length - 1) : Math.max(current - 1, 0);
      const link = cards[current].querySelector("a.open");
      cards.forEach(function (c) { c.classList.remove("current"); });
      cards[current].classList.add("current");
      if (link) { ev.preventDefault(); link.focus(); link.scrollIntoView({block: "nearest"}); }
    }
  });

  // -- an ask run: steps stream in (Server-Sent Events), Stop without a reload -------------
  const run = document.getElementById("run");
  if (run) {
    const status = document.getElementById("status");
    const steps = document.getElementById("steps");
    const answer = document.getElementById("answer");
    const form = document.getElementById("stop-form");
    const live = status && (status.dataset.status === "running" || status.dataset.status === "queued");
    if (form) {
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        const button = document.getElementById("stop");
        button.disabled = true;
        status.textContent = "stopping";
        fetch(form.action, {method: "POST", headers: {"X-Requested-With": "fetch"}});
      });
    }
    if (live && window.EventSource) {
      const es = new EventSource(run.dataset.events + "?after=" + run.dataset.after);
      es.addEventListener("status", function (ev) {
        if (ev.data === "start") status.textContent = "running";
      });
      es.addEventListener("step", function (ev) {
        steps.insertAdjacentHTML("beforeend", ev.data);
      });
      es.addEventListener("answer", function (ev) {
        answer.innerHTML = ev.data;
      });
      es.addEventListener("done", function (ev) {
        es.close();
        status.textContent = ev.data;
        status.dataset.status = ev.data;
        if (form) form.remove();
      });
    }
  }
})();
