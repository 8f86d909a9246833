// Debian's Chromium for the browser tests: never a downloaded browser, headless, and no
// sandbox of its own (the tests run as root, where Chromium's sandbox refuses to start).
import { type Browser, chromium } from "playwright-core";

/** The two sizes the pages are tested at: a desktop window and a 390×844 phone. */
export const SIZES = [
  { name: "desktop", viewport: { width: 1280, height: 800 } },
  { name: "phone", viewport: { width: 390, height: 844 } },
] as const;

/**
 * Starts /usr/bin/chromium headless.
 * @example const browser = await launchChromium(); … await browser.close();
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}
