// The rider's pages of the OAuth flow: sign-in, consent, and the error page. Plain HTML with one
// inline style sheet (allowed by its nonce) and no external assets; labelled fields and buttons in
// keyboard order; every page refuses to be framed (CSP frame-ancestors 'none', X-Frame-Options).
import { randomBytes } from 'node:crypto';

const escapeHtml = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** What each scope lets an app do, as the consent page says it. */
const SCOPE_WORDS: Record<string, string> = {
  openid: 'Know who you are on Quietway',
  email: 'See your email address',
};

export interface Page {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f6f4; color: #1b1f1b; }
  main { max-width: 26rem; margin: 3rem auto; padding: 2rem; background: #fff; border-radius: 8px;
         box-shadow: 0 1px 4px rgba(0,0,0,.15); }
  h1 { font-size: 1.4rem; margin-top: 0; }
  label { display: block; margin-top: 1rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; margin-top: .25rem;
          border: 1px solid #6b756b; border-radius: 4px; }
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { font: inherit; padding: .55rem 1.2rem; border-radius: 4px; border: 1px solid #1d5c2e;
           cursor: pointer; background: #fff; color: #1d5c2e; }
  button.primary { background: #1d5c2e; color: #fff; }
  button:focus-visible, input:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  .error { color: #a4161a; font-weight: 600; }
  ul { padding-left: 1.2rem; }
`;

function page(status: number, title: string, content: string): Page {
  const nonce = randomBytes(16).toString('base64');
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} · Quietway</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${content}
</main>
</body>
</html>
`;
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'`,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    },
    body,
  };
}

const hidden = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;

export function signInPage(p: {
  action: string;
  cancelAction: string;
  appName: string;
  csrf: string;
  email?: string;
  error?: string;
  status?: number;
}): Page {
  const error = p.error ? `<p class="error" role="alert" id="sign-in-error">${escapeHtml(p.error)}</p>` : '';
  return page(
    p.status ?? 200,
    'Sign in',
    `<h1>Sign in to continue to ${escapeHtml(p.appName)}</h1>
${error}
<form method="post" action="${escapeHtml(p.action)}">
${hidden(p.csrf)}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${escapeHtml(p.email ?? '')}"${p.error ? ' aria-describedby="sign-in-error"' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" class="primary">Sign in</button></div>
</form>
<form method="post" action="${escapeHtml(p.cancelAction)}">
${hidden(p.csrf)}
<div class="actions"><button type="submit">Cancel</button></div>
</form>`,
  );
}

export function consentPage(p: {
  action: string;
  cancelAction: string;
  appName: string;
  email: string;
  scopes: string[];
  csrf: string;
}): Page {
  const items = p.scopes
    .map((s) => `<li>${escapeHtml(SCOPE_WORDS[s] ?? s)} <small>(${escapeHtml(s)})</small></li>`)
    .join('\n');
  return page(
    200,
    'Allow access',
    `<h1>${escapeHtml(p.appName)} wants to sign you in</h1>
<p>Signed in as <strong>${escapeHtml(p.email)}</strong>.</p>
<p id="scopes-intro">If you allow it, ${escapeHtml(p.appName)} can:</p>
<ul aria-labelledby="scopes-intro">
${items}
<li>Plan routes and file road reports for you</li>
</ul>
<p>It cannot read your ride history, saved routes, profile or settings.</p>
<form method="post" action="${escapeHtml(p.action)}">
${hidden(p.csrf)}
<div class="actions">
<button type="submit" class="primary" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="cancel" formaction="${escapeHtml(p.cancelAction)}">Cancel</button>
</div>
</form>`,
  );
}

export function errorPage(status: number, title: string, message: string): Page {
  return page(
    status,
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
<p>Go back to the app and start signing in again.</p>`,
  );
}

export const EXPIRED_TITLE = 'This sign-in request has expired';
export const expiredPage = (): Page =>
  errorPage(
    400,
    EXPIRED_TITLE,
    'Sign-in requests are valid for 3 minutes. This one has expired or was already completed.',
  );
