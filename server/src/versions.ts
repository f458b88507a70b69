// The version registry (interface spec "Versioning"): every versioned endpoint, its status, and what
// replaces it. Deprecated versions answer with Deprecation / Link (and Sunset once announced)
// headers; retired ones (configuration) answer 410; unknown versions fall to the 404 handler.

export interface EndpointVersion {
  method: string;
  /** Route path as registered. */
  path: string;
  family: string;
  version: number;
  status: 'current' | 'deprecated';
  successor?: string;
  /** When the deprecation was announced (ISO date). */
  deprecatedOn?: string;
}

/** v1 routing closed to new integrations on the date the key requirement took effect. */
const V1_DEPRECATED_ON = '2026-04-14';

export const ENDPOINT_VERSIONS: EndpointVersion[] = [
  {
    method: 'POST',
    path: '/directions/',
    family: 'directions',
    version: 1,
    status: 'deprecated',
    successor: '/directions/v2/',
    deprecatedOn: V1_DEPRECATED_ON,
  },
  { method: 'POST', path: '/directions/v2/', family: 'directions', version: 2, status: 'current' },
  {
    method: 'POST',
    path: '/multi-modal/',
    family: 'multi-modal',
    version: 1,
    status: 'deprecated',
    successor: '/multi-modal/v2/',
    deprecatedOn: V1_DEPRECATED_ON,
  },
  { method: 'POST', path: '/multi-modal/v2/', family: 'multi-modal', version: 2, status: 'current' },
  { method: 'POST', path: '/explain-supersafe/', family: 'explain-supersafe', version: 1, status: 'current' },
  { method: 'POST', path: '/reports/', family: 'reports', version: 1, status: 'current' },
  { method: 'GET', path: '/reports/:id/', family: 'reports', version: 1, status: 'current' },
];

export const RETIRED = 'API version retired';

/** The body of a retired version's 410. */
export function retiredBody(path: string, successor: string | undefined): { error: string; details: string } {
  return {
    error: RETIRED,
    details: successor ? `${path} was retired; use ${successor}` : `${path} was retired`,
  };
}

/** Deprecation headers (RFC 9745 Deprecation, RFC 8594 Sunset, successor Link). */
export function deprecationHeaders(v: EndpointVersion, sunset: string | null): Record<string, string> {
  const h: Record<string, string> = {};
  if (v.deprecatedOn) h.Deprecation = `@${Math.floor(Date.parse(`${v.deprecatedOn}T00:00:00Z`) / 1000)}`;
  if (v.successor) h.Link = `<${v.successor}>; rel="successor-version"`;
  if (sunset) h.Sunset = new Date(`${sunset}T00:00:00Z`).toUTCString();
  return h;
}
