// A rider's browser for the OAuth tests without a browser engine: fetch with a cookie jar, following
// the server's redirects and filling its sign-in and consent forms the way a rider would. (The
// Chromium tests drive the same pages in a real browser.)

interface Cookie {
  value: string;
  path: string;
}

export class FormBrowser {
  private readonly jar = new Map<string, Cookie>();

  constructor(private readonly base: string) {}

  private cookieHeader(url: URL): string {
    return [...this.jar.entries()]
      .filter(
        ([, c]) =>
          url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`),
      )
      .map(([k, c]) => `${k.split('\u0000')[0]}=${c.value}`)
      .join('; ');
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const [name, ...v] = (pair as string).split('=');
      const path = attrs.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      const expires = attrs.find((a) => a.toLowerCase().startsWith('expires='))?.slice(8);
      const key = `${name}\u0000${path}`;
      if (expires && Date.parse(expires) <= Date.now()) this.jar.delete(key);
      else this.jar.set(key, { value: v.join('='), path });
    }
  }

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const u = new URL(url, this.base);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(u);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(u, { ...init, headers, redirect: 'manual' });
    this.keep(res);
    return res;
  }

  post(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.base, ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }

  /**
   * Opens an authorize URL and goes through the server's pages (signing in when asked, then
   * allowing or cancelling) until the server redirects away from itself; returns that URL.
   */
  async authorize(
    authorizeUrl: string,
    o: { email: string; password: string; decision?: 'allow' | 'cancel' },
  ): Promise<string> {
    let res = await this.request(authorizeUrl);
    for (let step = 0; step < 12; step++) {
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, this.base);
        if (next.origin !== new URL(this.base).origin) return next.href;
        res = await this.request(next.href);
        continue;
      }
      const html = await res.text();
      if (res.status !== 200) throw new Error(`page answered ${res.status}: ${html}`);
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const signIn = /action="([^"]+\/sign-in)"/.exec(html)?.[1];
      if (signIn) {
        res = await this.post(signIn, { csrf, email: o.email, password: o.password });
        continue;
      }
      const allow = /action="([^"]+\/allow)"/.exec(html)?.[1];
      const cancel = /formaction="([^"]+\/cancel)"/.exec(html)?.[1];
      if (!allow || !cancel) throw new Error(`unexpected page: ${html}`);
      res = await this.post(o.decision === 'cancel' ? cancel : allow, { csrf });
    }
    throw new Error('too many steps');
  }
}
