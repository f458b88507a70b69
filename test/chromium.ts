// Headless Chromium for the page tests: Debian's `chromium` package, installed with apt-get when it
// is missing (never a browser build downloaded by a test tool). Fails loudly when it cannot be had.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export function ensureChromium(): string {
  const found = CANDIDATES.find((p) => fs.existsSync(p));
  if (found) return found;
  const asRoot = process.getuid?.() === 0;
  const run = (args: string[]) =>
    execFileSync(asRoot ? 'apt-get' : 'sudo', asRoot ? args : ['-n', 'apt-get', ...args], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 15 * 60_000,
    });
  try {
    run(['update']);
    run(['install', '-y', 'chromium']);
  } catch (err) {
    throw new Error(
      `Debian's chromium is needed by the page tests and could not be installed: ${(err as Error).message}`,
    );
  }
  const installed = CANDIDATES.find((p) => fs.existsSync(p));
  if (!installed) throw new Error('apt-get install chromium finished but no chromium binary was found');
  return installed;
}
