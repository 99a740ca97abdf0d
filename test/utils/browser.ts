import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';

/** Debian's chromium (apt package `chromium`); playwright-core never downloads a browser of its own. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser is installed. Under CI=true a missing one throws, so the run fails instead
 * of skipping (.ci/run installs it); elsewhere callers skip with a reason.
 */
export function browserAvailable(): boolean {
  const found = existsSync(CHROMIUM_PATH);
  if (!found && process.env.CI === 'true') {
    throw new Error(`Chromium is not installed at ${CHROMIUM_PATH}; CI needs it (.ci/run installs Debian's chromium).`);
  }
  return found;
}

/** A headless Chromium with a throwaway profile; `close()` ends the browser and removes the profile. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches Debian's chromium headless. The flags keep it off the network: this machine's closed
 * network refuses the background connections Chromium otherwise opens at every start.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'mcp-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
