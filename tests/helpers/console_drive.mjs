// Drives `memory-chain ui` in headless Chromium (Debian's, through playwright-core) as a
// person would: one browser context (so the session cookie carries), a list of steps.
// Input on stdin: {url, steps: [...]}, each step one of
//   {do: "goto", path}                  open a page of the console (first: the token URL)
//   {do: "viewport", width}             the window's width (height 900)
//   {do: "shot", path}                  a full-page screenshot
//   {do: "click", selector}             click, and wait for the page it leads to
//   {do: "fill", selector, value}
//   {do: "press", keys: [...]}          keys in turn (Tab, Enter ...); the last navigates
//   {do: "replace", file, old, new}     edit a file behind the page's back
//   {do: "download", selector, path}    click, save what it downloads
//   {do: "read"}                        record the page's URL, status and text
// Output: {reads: [{url, status, text, focused, ms}], requests, errors}; requests lists any
// request to somewhere other than the console.
import { readFileSync, writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const input = JSON.parse(readFileSync(0, "utf8"));
const origin = new URL(input.url).origin;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const reads = [];
const requests = [];
const errors = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.on("request", (r) => { if (!r.url().startsWith(origin)) requests.push(r.url()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  // a page's own status is read by "read" (409 and 422 are answers); anything else that
  // fails to load (the stylesheet ...) or a console error is an error
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  let status = null;
  const downloads = new Set(); // a download ends its request early: not a failure
  page.on("response", (r) => {
    if ((r.headers()["content-disposition"] ?? "").startsWith("attachment")) downloads.add(r.url());
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) status = r.status();
    else if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
  });
  page.on("requestfailed", (r) => { if (!downloads.has(r.url())) errors.push(`failed ${r.url()}`); });
  for (const step of input.steps) {
    if (step.do === "goto") {
      await page.goto(step.path.startsWith("http") ? step.path : origin + step.path);
    } else if (step.do === "viewport") {
      await page.setViewportSize({ width: step.width, height: 900 });
    } else if (step.do === "shot") {
      await page.screenshot({ path: step.path, fullPage: true });
    } else if (step.do === "click") {
      await Promise.all([page.waitForNavigation(), page.click(step.selector)]);
    } else if (step.do === "fill") {
      await page.fill(step.selector, step.value);
    } else if (step.do === "press") {
      const last = step.keys.length - 1;
      for (const key of step.keys.slice(0, last)) await page.keyboard.press(key);
      await Promise.all([page.waitForNavigation(), page.keyboard.press(step.keys[last])]);
    } else if (step.do === "replace") {
      const text = readFileSync(step.file, "utf8");
      if (!text.includes(step.old)) throw new Error(`${step.file} has no ${step.old}`);
      writeFileSync(step.file, text.replace(step.old, step.new));
    } else if (step.do === "download") {
      const [download] = await Promise.all([page.waitForEvent("download"), page.click(step.selector)]);
      await download.saveAs(step.path);
    } else if (step.do === "read") {
      const text = await page.evaluate(() => document.body.innerText);
      const focused = await page.evaluate(() => document.activeElement?.textContent ?? "");
      // from the request to the load event, as the browser measured it
      const ms = await page.evaluate(() => performance.getEntriesByType("navigation")[0]?.duration ?? null);
      reads.push({ url: page.url(), status, text, focused, ms });
    } else {
      throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
  }
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify({ reads, requests, errors }) + "\n");
