// The auditor's page: checks a proof bundle (embedded, or dropped on the
// page) or an export archive in the browser, with nothing fetched.
import { fromBase64, decodeUtf8 } from "./bytes.js";
import { BUNDLE_STEPS, BundleError, verifyBundle } from "./bundle.js";
import { verifyArchive } from "./archive.js";
import { REASONS, TIERS, TYPES } from "./words.js";

const $ = (id) => document.getElementById(id);
const KEY_RE = /^ed25519:[0-9a-f]{64}$/;
const HEX_RE = /^[0-9a-f]{64}$/;
const CHAIN_RE = /^b3:[0-9a-f]{64}$/;

let current = null; // {bytes, name}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

// "ed25519:<hex>", bare 64 hex (a key) or "b3:<hex>" (a chain id).
export function parsePin(text) {
  const t = text.trim().toLowerCase();
  if (t === "") return { trustedKey: null, chainId: null };
  if (KEY_RE.test(t)) return { trustedKey: t, chainId: null };
  if (HEX_RE.test(t)) return { trustedKey: "ed25519:" + t, chainId: null };
  if (CHAIN_RE.test(t)) return { trustedKey: null, chainId: t };
  return null;
}

function pinFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  return params.get("key") ?? params.get("chain") ?? "";
}

function setVerdict(state, title, detail, extra = {}) {
  const v = $("verdict");
  v.dataset.verdict = state;
  v.dataset.reason = extra.reason ?? "";
  v.dataset.step = extra.step ?? "";
  v.dataset.ms = extra.ms ?? "";
  $("verdict-title").textContent = title;
  $("verdict-detail").textContent = detail;
}

function when(ts) {
  const d = new Date(ts.slice(0, 23) + "Z");
  return isNaN(d) ? ts : `${d.toUTCString().replace("GMT", "UTC")} (${ts})`;
}

// What the bundle claims, shown before (and while) it is checked.
// state: "checked", "claimed" (not checked yet) or "failed".
function showClaim(obj, state) {
  const card = $("memory");
  card.replaceChildren();
  let entry = null;
  try {
    entry = JSON.parse(obj.entry.line);
  } catch {
    card.append(el("p", {}, "The proof does not say which memory it is about."));
    return;
  }
  let text = null;
  if (typeof obj.content === "string") {
    const raw = fromBase64(obj.content);
    try {
      text = raw === null ? null : decodeUtf8(raw);
    } catch {
      text = null;
    }
  }
  card.dataset.verified = { checked: "yes", claimed: "no", failed: "failed" }[state];
  const label = {
    checked: "The memory (checked)",
    claimed: "The memory, as this file claims it (not checked yet)",
    failed: "What this file claims (it FAILED the check: do not rely on it)",
  }[state];
  card.append(
    el("p", { class: "label" }, label),
    el("blockquote", { id: "memory-text" }, text ?? "(the proof does not include the memory's text; it proves only that this entry exists)"),
  );
  const rows = [
    ["Kind", `${entry.type} — ${TYPES[entry.type] ?? "a system entry"}`],
    ["Retention", `${entry.tier} — ${TIERS[entry.tier] ?? ""}`],
    ["Recorded at", when(String(entry.ts))],
    ["Entry number", String(entry.seq)],
    ["Signed by key", String(entry.key)],
    ["Chain", obj.chainId ?? "(shown once checked)"],
  ];
  const dl = el("dl", { id: "facts" });
  for (const [k, v] of rows) dl.append(el("dt", {}, k), el("dd", { "data-field": k }, v));
  card.append(dl);
}

function showSteps(steps) {
  const list = $("steps");
  list.replaceChildren();
  for (const s of steps) {
    const item = el("li", { "data-status": s.status, "data-step": String(s.step) }, el("span", { class: "mark" }, { pass: "✔", fail: "✘", skip: "–" }[s.status]), el("span", { class: "what" }, s.text));
    if (s.why) item.append(el("p", { class: "why" }, s.why));
    if (s.detail) item.append(el("p", { class: "detail" }, s.detail));
    list.append(item);
  }
}

function checkBundle(bytes, pin) {
  let obj = null;
  try {
    obj = JSON.parse(decodeUtf8(bytes));
  } catch {
    obj = null;
  }
  if (obj && obj.entry) showClaim(obj, "claimed");
  const passed = [];
  const t0 = performance.now();
  let proved = null;
  let failure = null;
  try {
    proved = verifyBundle(bytes, { ...pin, passed: (n) => passed.push(n) });
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    failure = err;
  }
  const ms = performance.now() - t0;
  const steps = passed.map((n) => ({ step: n, status: "pass", text: BUNDLE_STEPS[n] }));
  if (failure !== null) {
    steps.push({ step: failure.step, status: "fail", text: BUNDLE_STEPS[failure.step], why: REASONS[failure.reason] ?? failure.reason, detail: `${failure.reason}: ${failure.message}` });
    for (let n = failure.step + 1; n <= 16; n++) steps.push({ step: n, status: "skip", text: BUNDLE_STEPS[n] + " (not checked)" });
  }
  showSteps(steps);
  const timing = { ms: ms.toFixed(2) };
  if (failure === null) {
    obj.chainId = proved.chainId;
    showClaim(obj, "checked");
    setVerdict("pass", "Verified", `This memory was recorded as entry ${proved.seq} of chain ${proved.chainId}, signed by the agent's key ${proved.key}, and has not been changed since. Checked in ${ms.toFixed(1)} ms, in this page, with nothing sent anywhere.`, timing);
  } else if (failure.reason === "unpinned") {
    setVerdict("waiting", "Not checked yet", "Enter the agent's public key or chain ID that you trust (from the agent's operator, not from this file), then press Check.", { ...timing, reason: "unpinned", step: 1 });
  } else {
    if (obj && obj.entry) showClaim(obj, "failed");
    setVerdict("fail", "Not verified", `Step ${failure.step} failed (“${BUNDLE_STEPS[failure.step]}”). ${REASONS[failure.reason] ?? ""}`, { ...timing, reason: failure.reason, step: failure.step });
  }
}

async function checkArchive(bytes, pin) {
  $("memory").replaceChildren(el("p", { class: "label" }, "An export archive: a copy of the agent's record"));
  setVerdict("working", "Checking…", "Reading the archive.");
  const t0 = performance.now();
  const r = await verifyArchive(bytes, {
    ...pin,
    onProgress: (done, total) => {
      $("verdict-detail").textContent = `Checked ${done} of ${total} entries…`;
    },
  });
  const ms = performance.now() - t0;
  const f = r.failure;
  const what = r.complete ? `the whole record (${r.entries ?? "?"} entries)` : `entries ${r.from} to ${r.to}, proven against a signed summary`;
  const steps = [{ step: 0, status: f && f.step === 0 ? "fail" : "pass", text: "The archive is complete and matches its table of contents" }];
  if (!f || f.step !== 0) steps.push({ step: 1, status: f ? "fail" : "pass", text: `Every entry is well formed, linked to the one before and signed by the agent's key (${what})` });
  if (f) Object.assign(steps[steps.length - 1], { why: REASONS[f.reason] ?? f.reason, detail: `${f.reason} (step ${f.step}${f.seq === null ? "" : ", entry " + f.seq}): ${f.message}` });
  showSteps(steps);
  const timing = { ms: ms.toFixed(2) };
  const pinned = pin.trustedKey !== null || pin.chainId !== null;
  if (f) {
    setVerdict("fail", "Not verified", REASONS[f.reason] ?? f.reason, { ...timing, reason: f.reason, step: f.step });
  } else if (!pinned) {
    setVerdict("waiting", "Consistent, but not pinned", "The archive agrees with itself, but anyone can make such an archive. Enter the agent's public key or chain ID that you trust, then press Check.", { ...timing, reason: "unpinned" });
  } else {
    const texts = r.content_checked ? "Every memory's text was checked." : "The archive carries no memory texts: they were not checked.";
    setVerdict("pass", "Verified", `The archive holds ${what} of chain ${r.chain_id}, last signed by ${r.key}. ${texts} Checked in ${ms.toFixed(1)} ms.`, timing);
  }
}

export async function check() {
  const pin = parsePin($("pin").value);
  if (pin === null) {
    setVerdict("waiting", "Not checked yet", "That is not a key (ed25519:… or 64 hex digits) or a chain ID (b3:…).", { reason: "bad-pin" });
    return;
  }
  if (current === null) {
    setVerdict("waiting", "Nothing to check", "Drop a proof (.json) or an export archive (.tar, .tar.gz) on this page.");
    return;
  }
  $("file-name").textContent = current.name;
  const b = current.bytes;
  // An archive by its bytes (gzip, or a ustar header) or by its name.
  const isArchive = (b[0] === 0x1f && b[1] === 0x8b) || String.fromCharCode(...b.subarray(257, 262)) === "ustar" || /\.(tar|tgz|gz)$/i.test(current.name);
  if (isArchive) await checkArchive(b, pin);
  else checkBundle(b, pin);
}

function load(bytes, name) {
  current = { bytes, name };
  return check();
}

function start() {
  const data = $("proof-data");
  const embedded = data.textContent.trim();
  $("pin").value = pinFromFragment();
  $("pin-form").addEventListener("submit", (e) => {
    e.preventDefault();
    check();
  });
  window.addEventListener("hashchange", () => {
    $("pin").value = pinFromFragment();
    check();
  });
  const drop = document.body;
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("dragging");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
  drop.addEventListener("drop", async (e) => {
    e.preventDefault();
    drop.classList.remove("dragging");
    const file = e.dataTransfer.files[0];
    if (file) await load(new Uint8Array(await file.arrayBuffer()), file.name);
  });
  $("file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (file) await load(new Uint8Array(await file.arrayBuffer()), file.name);
  });
  if (embedded !== "") {
    const bytes = fromBase64(embedded);
    if (bytes !== null) current = { bytes, name: data.dataset.name || "the proof in this page" };
  }
  window.memoryChainCheck = check; // for scripts driving the page
  window.memoryChainLoad = load;
  check();
}

start();
