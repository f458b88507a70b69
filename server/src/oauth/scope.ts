// The endpoints an OAuth access token works on (interface spec, Authentication part 4). The auth
// plugin stamps `oauth: 'accept'` on these routes as they are declared, so an endpoint of the list
// that lands later gets the rule without saying so; every other route keeps its own rule (401 where
// the spec documents the refusal, 403 by default).
export const OAUTH_ENDPOINTS = [
  'POST /directions/v2/',
  'POST /multi-modal/v2/',
  'POST /explain-supersafe/',
  'POST /reports/',
  'GET /reports/:id/',
] as const;

/** `METHOD /path` with parameters reduced to `:` and no trailing slash. */
const routeKey = (method: string, url: string) =>
  `${method.toUpperCase()} ${url.replace(/:[^/]+/g, ':').replace(/(.)\/$/, '$1')}`;

const LISTED = new Set(
  OAUTH_ENDPOINTS.map((e) => {
    const [method, url] = e.split(' ') as [string, string];
    return routeKey(method, url);
  }),
);

/** Whether an OAuth access token is accepted on this route. */
export function acceptsOAuth(method: string | string[], url: string): boolean {
  const methods = Array.isArray(method) ? method : [method];
  return methods.some((m) => LISTED.has(routeKey(m, url)));
}
