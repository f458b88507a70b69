// The rider's OAuth pages in headless Chromium (Debian's chromium driven by playwright-core): sign
// in and approve with the keyboard, cancel, a login request that expired, and the consent page
// inside another site's frame.
import http from 'node:http';
import * as oidc from 'openid-client';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../chromium.js';
import {
  expireLoginRequest,
  freePort,
  type OAuthServer,
  RIDER,
  registerApp,
  startOAuthServer,
} from './oauth-setup.js';

let APP_ORIGIN = '';
let CALLBACK = '';

let s: OAuthServer;
let browser: Browser;
let config: oidc.Configuration;
/** The third-party app's own web server on localhost: records its callbacks, serves its pages. */
let appServer: http.Server;
const callbacks: URL[] = [];
const appPages: Record<string, string> = {};

beforeAll(async () => {
  const executablePath = ensureChromium();
  const port = await freePort();
  APP_ORIGIN = `http://localhost:${port}`;
  CALLBACK = `${APP_ORIGIN}/callback`;
  appServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', APP_ORIGIN);
    if (url.pathname === '/callback') callbacks.push(url);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(appPages[url.pathname] ?? '<!doctype html><title>Bike Buddy</title><p>Signed in</p>');
  });
  await new Promise<void>((resolve) => appServer.listen(port, '127.0.0.1', resolve));
  s = await startOAuthServer();
  const app = await registerApp(s, { name: 'Bike Buddy', type: 'public', redirect_uris: [CALLBACK] });
  config = await oidc.discovery(new URL(s.issuer), app.client_id, undefined, oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });
  // Root in a container has no user namespaces for Chromium's sandbox.
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
}, 900_000);
afterAll(async () => {
  await browser?.close();
  appServer?.close();
  await s?.close();
});

/** A fresh browser (no cookies), with the app's callbacks so far forgotten. */
async function appContext(): Promise<{ ctx: BrowserContext; callbacks: URL[] }> {
  callbacks.length = 0;
  // Chromium resolves localhost to the loopback addresses itself; the app listens on 127.0.0.1.
  const ctx = await browser.newContext();
  return { ctx, callbacks };
}

async function authorizeUrl() {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  return { url: url.href, verifier, state };
}

describe('OAuth pages in Chromium', () => {
  it('signs in and approves with the keyboard; the app gets a code that redeems', async () => {
    const { ctx, callbacks } = await appContext();
    const page = await ctx.newPage();
    const a = await authorizeUrl();
    await page.goto(a.url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Sign in to continue to Bike Buddy',
    );
    // The email field has the focus; Tab moves to the password, Enter submits.
    await page.keyboard.type(RIDER.email);
    await page.keyboard.press('Tab');
    expect(await page.locator('#password').evaluate((el) => el === el.ownerDocument.activeElement)).toBe(
      true,
    );
    await page.keyboard.type(RIDER.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Bike Buddy wants to sign you in' }).waitFor();
    expect(await page.getByText('See your email address').count()).toBe(1);
    await page.getByRole('button', { name: 'Allow' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${CALLBACK}**`);
    expect(callbacks).toHaveLength(1);
    const callback = callbacks[0] as URL;
    expect(callback.searchParams.get('state')).toBe(a.state);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: a.verifier,
      expectedState: a.state,
    });
    expect(tokens.claims()?.email).toBe(RIDER.email);
    await ctx.close();
  });

  it('cancel sends the rider back with error=access_denied and the state', async () => {
    const { ctx, callbacks } = await appContext();
    const page = await ctx.newPage();
    const a = await authorizeUrl();
    await page.goto(a.url);
    await page.getByLabel('Email').fill(RIDER.email);
    await page.getByLabel('Password').fill(RIDER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL(`${CALLBACK}**`);
    const callback = callbacks[0] as URL;
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('error_description')).toBeTruthy();
    expect(callback.searchParams.get('state')).toBe(a.state);
    expect(callback.searchParams.get('code')).toBeNull();
    await ctx.close();
  });

  it('says so when the login request has expired', async () => {
    const { ctx, callbacks } = await appContext();
    const page = await ctx.newPage();
    await page.goto((await authorizeUrl()).url);
    const uid = new URL(page.url()).pathname.split('/').at(-1) as string;
    expireLoginRequest(s, uid);
    await page.getByLabel('Email').fill(RIDER.email);
    await page.getByLabel('Password').fill(RIDER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'This sign-in request has expired' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('3 minutes');
    expect(callbacks).toHaveLength(0);
    await ctx.close();
  });

  it('will not show the consent page inside another site’s frame', async () => {
    const { ctx } = await appContext();
    const page = await ctx.newPage();
    await page.goto((await authorizeUrl()).url);
    const consentUrl = page.url();
    expect(consentUrl).toContain('/oauth/consent/');
    appPages['/framer'] = `<!doctype html><title>Framer</title><iframe id="f" src="${consentUrl}"></iframe>`;
    const framer = await ctx.newPage();
    await framer.goto(`${APP_ORIGIN}/framer`);
    await framer.waitForLoadState('load');
    const frame = framer.frames().find((f) => f !== framer.mainFrame());
    // Chromium refuses the page (frame-ancestors 'none') and shows its own error document instead.
    await expect.poll(() => frame?.url(), { timeout: 10_000 }).toMatch(/^chrome-error:/);
    expect(await frame?.locator('#email').count()).toBe(0);
    await ctx.close();
  });
});
