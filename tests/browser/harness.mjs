// What the browser tests share: Debian's chromium through playwright-core (no browser download;
// POTOP_CHROMIUM names another), a page that records script errors, and a line per check.
import { chromium } from "playwright-core";

let failures = 0;
export function check(name, ok, detail = "") {
  if (ok) console.log(`ok   ${name}`);
  else { failures++; console.error(`FAIL: ${name} ${detail}`); }
}

// Runs test(browser, page, errors) on a fresh chromium and exits 1 if a check failed.
export async function withChromium(test) {
  const browser = await chromium.launch({
    executablePath: process.env.POTOP_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await test(browser, page, errors);
  } finally {
    await browser.close();
  }
  process.exit(failures ? 1 : 0);
}
