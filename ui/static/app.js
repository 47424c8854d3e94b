// mlerl ui: the page asks the server for HTML fragments (rendered by the same
// Go code as report.html) whenever the server says the records changed.
"use strict";
let cur = 0;             // the run whose progress, best program, policy and episodes are shown
let seen = -1;           // the server's version the page shows
let loaded = 0;          // episode rows of run cur in the table
let busy = false, again = false;
let policyShownAt = -1;  // the policy view is refetched at most every 10 s

const $ = (id) => document.getElementById(id);

async function text(url) {
  const r = await fetch(url, {cache: "no-store"});
  if (!r.ok) throw new Error(url + ": " + r.status);
  return r;
}

function fmt(x, d) { return x === null || x === undefined ? "-" : Number(x).toFixed(d); }

function showState(st) {
  const nav = $("runs");
  if (nav.children.length !== st.runs.length) {
    nav.innerHTML = "";
    st.runs.forEach((r, i) => {
      const b = document.createElement("button");
      b.onclick = () => select(i);
      nav.appendChild(b);
    });
  }
  st.runs.forEach((r, i) => {
    const b = nav.children[i];
    b.textContent = r.name;
    b.title = r.label;
    b.className = i === cur ? "on" : "";
  });
  const r = st.runs[cur], p = r.progress;
  $("title").textContent = r.name;
  const time = p.budget_s > 0 ? fmt(p.elapsed_s, 0) + "s/" + fmt(p.budget_s, 0) + "s" : fmt(p.elapsed_s, 0) + "s";
  $("progress").textContent = "[" + time + "] episodes " + p.episodes + " (" + p.valid + " valid), updates " +
    p.updates + ", running " + p.running + ", best score " + fmt(p.best_score, 4) + (p.finished ? " — finished" : "");
}

async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const st = await (await text("/api/state")).json();
    showState(st);
    if (st.version !== seen) {
      seen = st.version;
      $("overview").innerHTML = await (await text("/api/run?run=" + cur)).text();
      $("views").innerHTML = await (await text("/api/views")).text();
      await loadRows();
    }
    if (policyShownAt < 0 || Date.now() - policyShownAt > 10000) {
      policyShownAt = Date.now();
      $("policy-view").innerHTML = await (await text("/api/policy?run=" + cur)).text();
    }
  } catch (e) {
    $("live").textContent = "error: " + e.message;
  } finally {
    busy = false;
    if (again) { again = false; setTimeout(refresh, 300); }
  }
}

// loadRows appends only the episodes the table does not have yet.
async function loadRows() {
  const r = await text("/api/rows?run=" + cur + "&from=" + loaded);
  const total = parseInt(r.headers.get("X-Total") || "0", 10);
  const html = await r.text();
  if (total < loaded) { $("rows").innerHTML = ""; loaded = 0; return loadRows(); } // a resume cut the log back
  $("rows").insertAdjacentHTML("beforeend", html);
  loaded = total;
  const stages = $("f-stage");
  const have = new Set(Array.from(stages.options).map((o) => o.value));
  for (const tr of $("rows").children) {
    const s = tr.dataset.stage;
    if (!have.has(s)) { have.add(s); const o = document.createElement("option"); o.textContent = s; o.value = s; stages.appendChild(o); }
  }
  filter();
}

function filter() {
  const k = $("f-kind").value, v = $("f-valid").value, s = $("f-stage").value;
  let n = 0;
  for (const tr of $("rows").children) {
    const ok = (!k || tr.dataset.kind === k) && (!v || tr.dataset.valid === v) && (!s || tr.dataset.stage === s);
    tr.style.display = ok ? "" : "none";
    if (ok) n++;
  }
  $("shown").textContent = n + " of " + $("rows").children.length + " shown";
}

async function openEpisode(tr) {
  for (const x of document.querySelectorAll("tr.sel")) x.classList.remove("sel");
  tr.classList.add("sel");
  $("detail").innerHTML = await (await text("/api/episode?run=" + cur + "&n=" + tr.dataset.i)).text();
}

function select(i) {
  cur = i; seen = -1; loaded = 0; policyShownAt = -1;
  $("rows").innerHTML = "";
  $("detail").innerHTML = "";
  refresh();
}

for (const id of ["f-kind", "f-valid", "f-stage"]) $(id).addEventListener("change", filter);
$("rows").addEventListener("click", (e) => { const tr = e.target.closest("tr"); if (tr) openEpisode(tr); });

// The server pushes its version whenever a folder grows; polling every 5 s
// covers a stream a proxy dropped.
const es = new EventSource("/events");
es.addEventListener("update", (e) => { $("live").textContent = "live"; $("live").className = "live on"; if (Number(e.data) !== seen) refresh(); });
es.onerror = () => { $("live").textContent = "reconnecting…"; $("live").className = "live"; };
setInterval(refresh, 5000);
refresh();
