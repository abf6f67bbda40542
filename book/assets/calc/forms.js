// SPDX-License-Identifier: AGPL-3.0-or-later
// Binds each calculator form of a page (form.mlbook-calc-live, written by build/mlbook/markdown/calcblock.py) to
// MLCalc.compute: on every keystroke the form's fields become the script's argument list, exactly as
// build/mlbook/data/calcrun.py builds it, and the results, the refusal and the command line are redrawn.
(function (root) {
  "use strict";

  function fieldValue(el) {
    return el.type === "checkbox" ? (el.checked ? "true" : "false") : el.value;
  }

  // The argument list of the form's current state (calcrun.argv in Python).
  function argvOf(form) {
    const fields = Array.from(form.querySelectorAll("[data-flag]"));
    const value = {};
    for (const el of fields) value[el.name] = fieldValue(el);
    const out = [];
    for (const el of fields) {
      const off = Boolean(el.dataset.offWhen) && value[el.dataset.offWhen] !== "";
      el.disabled = off;
      if (off) continue;
      const text = value[el.name];
      if (el.type === "checkbox") {
        if (text === "true") out.push(el.dataset.flag);
      } else if (!(el.dataset.optional === "true" && text === "")) {
        out.push(`${el.dataset.flag}=${text}`);
      }
    }
    return out;
  }

  // shlex.join of Python.
  function shellJoin(words) {
    return words
      .map((w) => (w === "" ? "''" : /[^\w@%+=:,./-]/.test(w) ? "'" + w.replace(/'/g, "'\"'\"'") + "'" : w))
      .join(" ");
  }

  // The flags a refusal names: the one of "argument --flag: ...", else those after "missing", else every one named.
  function refusedFlags(error) {
    const text = error.slice(error.indexOf(": error: ") + 9);
    const argument = /^argument (--[\w-]+)/.exec(text);
    if (argument) return [argument[1]];
    const missing = text.indexOf("missing");
    return (missing >= 0 ? text.slice(missing) : text).match(/--[\w-]+/g) || [];
  }

  // Marks the refused fields aria-invalid and points them at the refusal, so a screen reader says why.
  function markInvalid(form, error) {
    const flags = error ? refusedFlags(error) : [];
    const message = form.querySelector(".mlbook-calc-error");
    for (const el of form.querySelectorAll("[data-flag]")) {
      const note = el.dataset.note || (el.dataset.note = el.getAttribute("aria-describedby") || "");
      if (!el.disabled && flags.includes(el.dataset.flag)) {
        el.setAttribute("aria-invalid", "true");
        el.setAttribute("aria-describedby", `${note} ${message.id}`.trim());
      } else {
        el.removeAttribute("aria-invalid");
        el.setAttribute("aria-describedby", note);
      }
    }
  }

  function redraw(form) {
    const args = argvOf(form);
    const result = root.MLCalc.compute(form.dataset.calc, args);
    const values = result.values || {};
    for (const out of form.querySelectorAll("output[data-key]")) out.value = values[out.dataset.key] || "";
    for (const row of form.querySelectorAll(".mlbook-calc-results tbody tr")) {
      row.hidden = !Array.from(row.querySelectorAll("output")).some((o) => o.value !== "");
    }
    const error = form.querySelector(".mlbook-calc-error");
    error.textContent = result.error || "";
    error.hidden = !result.error;
    form.querySelector(".mlbook-calc-results").hidden = Boolean(result.error);
    form.querySelector(".mlbook-calc-command code").textContent = shellJoin(["python3", form.dataset.script, ...args]);
    form.classList.toggle("mlbook-calc-refused", Boolean(result.error));
    markInvalid(form, result.error);
  }

  function bind(form) {
    if (form.dataset.bound) return;
    form.dataset.bound = "true";
    const links = {};
    for (const option of form.querySelectorAll("option[data-gbps]")) links[option.value] = Number(option.dataset.gbps);
    if (Object.keys(links).length) root.MLCalc.setLinks(links);
    form.addEventListener("input", () => redraw(form));
    form.addEventListener("change", () => redraw(form));
    form.addEventListener("submit", (event) => event.preventDefault());
    redraw(form);
  }

  function init() {
    for (const form of document.querySelectorAll("form.mlbook-calc-live")) bind(form);
  }

  root.MLCalc = Object.assign(root.MLCalc || {}, { argvOf, shellJoin, refusedFlags, redraw, init });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  // Material's instant navigation (if switched on) swaps pages without a load event.
  if (root.document$ && root.document$.subscribe) root.document$.subscribe(init);
})(window);
