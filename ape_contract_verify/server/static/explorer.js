// The local explorer's few interactions: tabs, source-file tabs, copy buttons, and the Read/Write
// forms. Everything received is written with textContent, never as HTML.
"use strict";

document.documentElement.classList.add("js");

const opened = new Set();

function showTab(key) {
  const tabs = document.querySelectorAll("nav.tabs .tab");
  if (!tabs.length) return;
  const known = Array.from(tabs).some((t) => t.dataset.tab === key);
  const active = known ? key : tabs[0].dataset.tab;
  tabs.forEach((t) => {
    t.classList.toggle("active", t.dataset.tab === active);
    t.setAttribute("aria-selected", t.dataset.tab === active ? "true" : "false");
  });
  document.querySelectorAll(".panel").forEach((p) => { p.hidden = p.dataset.panel !== active; });
  if (!opened.has(active)) {
    opened.add(active);
    // Like a public explorer, a Read tab shows its argument-less functions' values at once.
    document.querySelectorAll(`.panel[data-panel="${active}"] form.fn[data-kind=read]`).forEach((form) => {
      if (!form.querySelector("input")) submitForm(form);
    });
  }
}

function showFile(id) {
  document.querySelectorAll(".file-tab").forEach((b) => b.classList.toggle("active", b.dataset.file === id));
  document.querySelectorAll("figure.source").forEach((f) => { f.hidden = f.dataset.filePanel !== id; });
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (err) {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  const label = button.textContent;
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = label; }, 1200);
}

function line(parent, label, value, cls) {
  const span = document.createElement("span");
  span.className = cls || "result";
  if (label) {
    const b = document.createElement("b");
    b.textContent = label;
    span.appendChild(b);
  }
  span.appendChild(document.createTextNode(value));
  parent.appendChild(span);
  return span;
}

function shown(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

async function submitForm(form) {
  const out = form.querySelector(".out");
  const ticket = (form.ticket = (form.ticket || 0) + 1);  // only the latest answer is shown
  out.textContent = "";
  const args = Array.from(form.querySelectorAll("input[name=arg]")).map((i) => i.value);
  const value = form.querySelector("input[name=value]");
  const body = {
    address: form.dataset.address,
    function: form.dataset.function,
    proxy: form.dataset.proxy === "1",
    args: args,
  };
  if (value) body.value = value.value;
  const url = form.dataset.kind === "read" ? "/page-api/read" : "/page-api/calldata";
  out.dataset.state = "busy";
  let answer;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    answer = await response.json();
  } catch (err) {
    answer = { ok: false, error: "The explorer did not answer: " + err };
  }
  if (ticket !== form.ticket) return;
  if (!answer.ok) {
    line(out, "", answer.error || "The request failed.", "error");
  } else if (form.dataset.kind === "read") {
    answer.outputs.forEach((o) => {
      line(out, (o.name ? o.name + " " : "") + o.type + ": ", shown(o.value));
    });
    if (!answer.outputs.length) line(out, "", "(no return values)");
  } else {
    line(out, "to: ", answer.to);
    line(out, "value: ", answer.value + " wei");
    const data = line(out, "data: ", answer.data);
    data.classList.add("calldata");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy calldata";
    button.addEventListener("click", () => copyText(answer.data, button));
    out.appendChild(button);
  }
  out.dataset.state = answer.ok ? "done" : "error";
}

document.addEventListener("DOMContentLoaded", () => {
  showTab(location.hash.slice(1));
  window.addEventListener("hashchange", () => showTab(location.hash.slice(1)));
  document.querySelectorAll("nav.tabs .tab").forEach((t) => {
    t.addEventListener("click", (event) => {
      event.preventDefault();  // no jump to the panel's anchor
      history.replaceState(null, "", "#" + t.dataset.tab);
      showTab(t.dataset.tab);
    });
  });
  const firstFile = document.querySelector(".file-tab");
  if (firstFile) showFile(firstFile.dataset.file);
  document.querySelectorAll(".file-tab").forEach((b) => b.addEventListener("click", () => showFile(b.dataset.file)));
  document.querySelectorAll("button.copy[data-copy]").forEach((b) => {
    b.addEventListener("click", () => copyText(document.getElementById(b.dataset.copy).textContent, b));
  });
  document.querySelectorAll("form.fn").forEach((form) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      submitForm(form);
    });
  });
});
