// Fact-checking page: submit the claim to /api/verify and render the two columns in place (then the papers
// of unclear direction and the related ones, when the answer has them). Without JavaScript the same form is
// a GET rendered by the server, with identical markup.
"use strict";

(function () {
  const form = document.getElementById("verify-form");
  if (!form) return;
  const input = document.getElementById("claim");
  const button = document.getElementById("submit");
  const status = document.getElementById("status");
  const errorBox = document.getElementById("error");
  const results = document.getElementById("results");
  const kInput = form.querySelector('input[name="k"]');  // absent: the server uses the tuned k
  let current = null;

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children || []) node.append(child);
    return node;
  }

  function percent(p) {
    return p === null || p === undefined ? "n/a" : Math.round(p * 100) + "%";
  }

  function number(id, label, p) {
    return el("span", { class: "number" }, [
      el("label", { for: id, text: label + " " + percent(p) }),
      el("meter", { id: id, min: "0", max: "1", value: (p || 0).toFixed(3), text: percent(p) }),
    ]);
  }

  const BEST_MATCH_HELP = "The one paper that `sciverify predict` names for this claim (its answer in the " +
    "SciFact benchmark format); the others are shown because they are likely evidence too.";

  function sentenceNode(s, i, marked) {
    if (marked.has(i)) {
      const node = el("mark", { text: s });
      node.title = "Rationale sentence " + i;
      return node;
    }
    return el("span", { text: s });
  }

  // "2 supporting abstracts, 1 refuting abstract and 1 of unclear direction found; 3 related, not
  // evidence." Keep in step with found_line in templates/_result.html.
  function counted(n, noun) {
    return n + " " + noun + (n === 1 ? "" : "s");
  }
  function foundLine(support, contradict, unclear, related) {
    let line = counted(support.length, "supporting abstract") + (unclear.length ? ", " : " and ") +
      counted(contradict.length, "refuting abstract");
    if (unclear.length) line += " and " + unclear.length + " of unclear direction";
    line += " found";
    if (related.length) line += "; " + related.length + " related, not evidence";
    return line + ".";
  }

  // Keep in step with result_card in templates/_result.html; unclear: shown without a side.
  function renderResult(r, unclear) {
    const cls = unclear ? "unclear" : r.label === "SUPPORT" ? "support" : "contradict";
    const marked = new Set(r.rationale.map((s) => s.index));
    const hl = r.rationale.map((s) => s.index).join(",");
    const excerpt = el("p", { class: "excerpt" });
    let rest = null;
    if (r.sentences) {
      let prev = -1;
      for (const i of r.excerpt || []) {
        if (prev >= 0 && i !== prev + 1) excerpt.append(el("span", { class: "gap", "aria-hidden": "true", text: "… " }));
        excerpt.append(sentenceNode(r.sentences[i], i, marked), " ");
        prev = i;
      }
      const whole = el("p", { class: "abstract-text" });
      r.sentences.forEach((s, i) => whole.append(sentenceNode(s, i, marked), " "));
      rest = el("details", { class: "rest" }, [
        el("summary", { text: "Whole abstract (" + r.sentences.length + " sentences)" }),
        whole,
      ]);
    } else {
      for (const s of r.rationale) excerpt.append(el("mark", { text: s.text }), " ");
    }
    const n = r.rationale.length;
    const parts = [];
    const p = r.paper;
    if (p) {
      const where = [p.journal, p.year].filter((x) => x).join(" ");
      parts.push(where);
      if (r.link && where) parts.push(" · ");
    }
    if (r.link) {
      parts.push(el("a", { class: "paper-link", href: r.link, rel: "noopener noreferrer", text: r.link_label || "Paper page" }));
    }
    const id = String(r.doc_id);
    const meta = [n + " rationale sentence" + (n === 1 ? "" : "s") + " highlighted · doc " + id + " · "];
    if (r.in_prediction) {
      meta.push(el("span", { class: "pick", title: BEST_MATCH_HELP, text: "best match" }), " · ");
    }
    meta.push(el("a", { href: "/api/abstracts/" + encodeURIComponent(id), text: "JSON" }));
    const badges = (r.study && r.study.badges) || [];
    const children = [
      el("h4", { class: "result-title" }, [
        el("a", { href: "/abstracts/" + encodeURIComponent(id) + "?hl=" + hl, text: r.title }),
      ]),
    ];
    if (badges.length) {
      children.push(el("ul", { class: "badges", "aria-label": "About the study" }, badges.map((b) => el("li", { class: "badge", text: b }))));
    }
    children.push(
      el("p", { class: "paper" }, parts),
      el("p", { class: "why", text: r.why || "" }),
      el("div", { class: "numbers" }, [
        number("pe-" + id, "Chance it is evidence", r.p_evidence),
        number("pl-" + id, "Chance its side is right", r.p_label_correct),
      ]),
      excerpt,
    );
    if (rest) children.push(rest);
    children.push(el("p", { class: "meta" }, meta));
    return el("article", { class: "result " + cls, "data-doc-id": id, "data-weight": String(r.weight || 0) }, children);
  }

  // Keep in step with related_item in templates/_result.html.
  function relatedItem(r) {
    const id = String(r.doc_id);
    const numbers = el("span", { class: "related-numbers", text: "· Chance it is evidence " + percent(r.p_evidence) });
    if (r.link) {
      numbers.append(" · ", el("a", { class: "paper-link", href: r.link, rel: "noopener noreferrer", text: r.link_label || "Paper page" }));
    }
    return el("li", { class: "related-item", "data-doc-id": id }, [
      el("a", { href: "/abstracts/" + encodeURIComponent(id), text: r.title }), " ", numbers,
    ]);
  }

  function fill(listId, countId, items, emptyText, unclear) {
    const list = document.getElementById(listId);
    const cards = items.map((r) => renderResult(r, unclear));
    list.replaceChildren(...(cards.length || !emptyText ? cards : [el("p", { class: "empty", text: emptyText })]));
    document.getElementById(countId).textContent = String(items.length);
  }

  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = false;
    status.textContent = "";
  }

  // The server sheds load with 503 + Retry-After: count down on the page, then ask again.
  function waitBusy(seconds, controller) {
    return new Promise((resolve) => {
      let left = seconds;
      const tick = () => {
        if (controller.signal.aborted) return resolve(false);
        if (left <= 0) return resolve(true);
        status.textContent = "The server is busy, retrying in " + left + " s…";
        left -= 1;
        setTimeout(tick, 1000);
      };
      tick();
    });
  }

  async function verify(claim, push) {
    if (current) current.abort();
    const controller = new AbortController();
    current = controller;
    errorBox.hidden = true;
    button.disabled = true;
    results.setAttribute("aria-busy", "true");
    status.textContent = "Verifying…";
    try {
      for (;;) {
        const done = await attempt(claim, push, controller);
        if (done) break;
      }
    } finally {
      if (current === controller) {
        current = null;
        button.disabled = false;
        results.removeAttribute("aria-busy");
      }
    }
  }

  // One request; false when the server was busy and the caller should try again.
  async function attempt(claim, push, controller) {
    try {
      const response = await fetch("/api/verify", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ claim: claim, k: (kInput && Number(kInput.value)) || undefined, include_abstract: true }),
        signal: controller.signal,
      });
      const body = await response.json().catch(() => null);
      if (response.status === 503 && response.headers.get("Retry-After")) {
        const seconds = Math.max(1, Math.min(60, parseInt(response.headers.get("Retry-After"), 10) || 1));
        const again = await waitBusy(seconds, controller);
        if (again) status.textContent = "Verifying…";
        return !again;
      }
      if (!response.ok) {
        showError((body && body.message) || "The server could not verify this claim (HTTP " + response.status + ").");
        return true;
      }
      const support = body.supporting;
      const contradict = body.refuting;
      const unclear = body.unclear || [];  // answers from before these two lists have neither
      const related = body.related || [];
      fill("support-list", "support-count", support, "No supporting abstract found.");
      fill("contradict-list", "contradict-count", contradict, "No refuting abstract found.");
      fill("unclear-list", "unclear-count", unclear, "", true);
      document.getElementById("unclear").hidden = !unclear.length;
      document.getElementById("related-list").replaceChildren(...related.map(relatedItem));
      document.getElementById("related-count").textContent = String(related.length);
      document.getElementById("related").hidden = !related.length;
      document.getElementById("support-count-top").textContent = String(support.length);
      document.getElementById("contradict-count-top").textContent = String(contradict.length);
      const verdict = document.getElementById("verdict");
      verdict.textContent = body.verdict;
      verdict.className = "verdict-" + body.verdict.replace(/ /g, "-");
      document.getElementById("verdict-why").textContent = body.why || "";
      document.getElementById("searched").textContent = body.searched ? body.searched.line : "";
      foldForWidth();
      showSide(openingSide());
      const query = "claim=" + encodeURIComponent(body.claim) + (kInput && kInput.value ? "&k=" + encodeURIComponent(kInput.value) : "");
      document.getElementById("export-json").href = "/export?format=json&" + query;
      document.getElementById("export-csv").href = "/export?format=csv&" + query;
      results.hidden = false;
      status.textContent = foundLine(support, contradict, unclear, related);
      const url = "/?claim=" + encodeURIComponent(body.claim);
      if (push) history.pushState({ claim: body.claim }, "", url);
      document.title = body.claim.slice(0, 80) + " – sciverify: check a scientific claim";
      return true;
    } catch (err) {
      if (err.name !== "AbortError") showError("Could not reach the server. Check that it is running and try again.");
      return true;
    }
  }

  // At phone width the two sides are tabs: the links at the top show one side and hide the other, so
  // neither is below the other's papers. Wider, both columns show and the links just jump.
  const narrow = window.matchMedia("(max-width: 50rem)");
  const columns = document.querySelector(".results");
  function showSide(side) {
    if (!columns) return;
    columns.classList.remove("only-support", "only-contradict");
    for (const link of document.querySelectorAll("a.side-link")) link.removeAttribute("aria-current");
    if (!side || !narrow.matches) return;
    columns.classList.add("only-" + side);
    document.getElementById("show-" + side).setAttribute("aria-current", "true");
  }
  // The tab open when an answer arrives: the verdict's side; when there is none (conflicting, not enough
  // evidence), the side whose papers weigh more, then the one with more papers. So the first card on a
  // phone's first screen is the one the verdict rests on most.
  function openingSide() {
    const verdict = document.getElementById("verdict").textContent.trim();
    if (verdict === "supported") return "support";
    if (verdict === "refuted") return "contradict";
    const weigh = (side) => {
      const cards = document.querySelectorAll("#" + side + "-list article.result");
      let sum = 0;
      for (const card of cards) sum += Number(card.dataset.weight) || 0;
      return [sum, cards.length];
    };
    const [ws, ns] = weigh("support");
    const [wc, nc] = weigh("contradict");
    return wc > ws || (wc === ws && nc > ns) ? "contradict" : "support";
  }
  // What reads in full on a wide screen (the explanations, the related papers) folds on a phone, so the
  // verdict and the first papers fit on the first screen; one tap opens it.
  function foldForWidth() {
    for (const fold of document.querySelectorAll("details.fold-narrow")) fold.open = !narrow.matches;
  }
  for (const link of document.querySelectorAll("a.side-link")) {
    link.addEventListener("click", (event) => {
      if (!narrow.matches) return;  // wide: the anchor jumps to the column
      event.preventDefault();
      showSide(link.dataset.side);
      document.getElementById(link.dataset.side + "-heading").scrollIntoView({ block: "start" });
    });
  }
  narrow.addEventListener("change", () => {
    foldForWidth();
    showSide(results.hidden ? null : openingSide());
  });
  // A page the server rendered with an answer (a shared link, the back button, no-JavaScript form) gets the
  // same tabs and folds as one the script filled.
  foldForWidth();
  if (!results.hidden) showSide(openingSide());

  // The claim box is a text area so that a long claim wraps whole; Enter still verifies (Shift+Enter is a
  // line break, which the server folds into a space). Where CSS cannot size a field to its content
  // (field-sizing), the box grows here.
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  if (!(window.CSS && CSS.supports("field-sizing", "content"))) {
    const grow = () => {
      input.style.height = "auto";
      input.style.height = input.scrollHeight + 2 + "px";
    };
    input.addEventListener("input", grow);
    grow();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const claim = input.value.trim();
    if (!claim) {
      showError("Type a claim to verify.");
      input.focus();
      return;
    }
    verify(claim, true);
  });

  for (const link of document.querySelectorAll("a.example")) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      input.value = link.dataset.claim;
      input.dispatchEvent(new Event("input"));
      input.focus();
      verify(link.dataset.claim, true);
    });
  }

  window.addEventListener("popstate", () => {
    const claim = new URLSearchParams(location.search).get("claim");
    if (claim) {
      input.value = claim;
      input.dispatchEvent(new Event("input"));
      verify(claim, false);
    }
  });
})();
