// Drives the auditor's page in headless Chromium (Debian's, through
// playwright-core; nothing is downloaded) and prints what the page shows.
// Input on stdin: a JSON list of visits
//   {url, pin?, pin_by?: "field"|"none", archive?: path, screenshot?: path}
// Output: a JSON list of {verdict, reason, step, ms, title, detail, steps, memory}.
import { chromium } from "playwright-core";

const input = JSON.parse(await new Promise((resolve) => {
  let s = "";
  process.stdin.on("data", (d) => (s += d));
  process.stdin.on("end", () => resolve(s));
}));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const results = [];
try {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, offline: true });
  for (const visit of input) {
    const page = await context.newPage();
    const requests = [];
    page.on("request", (r) => {
      if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) requests.push(r.url());
    });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(visit.url);
    if (visit.archive) await page.setInputFiles("#file", visit.archive);
    if (visit.pin !== undefined && visit.pin_by === "field") {
      await page.fill("#pin", visit.pin);
      await page.click("#check");
    }
    await page.waitForFunction(() => {
      const v = document.getElementById("verdict");
      return v.dataset.ms !== undefined && v.dataset.ms !== "" && v.dataset.verdict !== "working";
    }, null, { timeout: 60000 }).catch(() => {});
    const shown = await page.evaluate(() => {
      const v = document.getElementById("verdict");
      return {
        verdict: v.dataset.verdict,
        reason: v.dataset.reason || null,
        step: v.dataset.step === "" ? null : Number(v.dataset.step),
        ms: v.dataset.ms === "" ? null : Number(v.dataset.ms),
        title: document.getElementById("verdict-title").textContent,
        detail: document.getElementById("verdict-detail").textContent,
        steps: [...document.querySelectorAll("#steps li")].map((li) => ({ step: Number(li.dataset.step), status: li.dataset.status, text: li.textContent })),
        memory: document.getElementById("memory").textContent,
      };
    });
    if (visit.screenshot) await page.screenshot({ path: visit.screenshot, fullPage: true });
    results.push({ ...shown, requests, errors });
    await page.close();
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(results) + "\n");
