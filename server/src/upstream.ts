// Calls to third-party services (place search, weather) over real HTTP with the spec's 4 s time-out.
// Every failure becomes an UpstreamError saying what went wrong, which each route turns into its
// own status (place search 502/504, weather 500).

/** The spec's upstream time-out (interface spec "Limits"). */
export const UPSTREAM_TIMEOUT_MS = 4000;

export class UpstreamError extends Error {
  constructor(
    readonly reason: 'timeout' | 'status' | 'network' | 'invalid',
    message: string,
    /** The upstream's HTTP status when it answered with an error. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** A provider selected in the configuration whose credentials are not set. */
export class NotConfiguredError extends Error {}

/** Fetches JSON; an error status, a time-out, a network failure or a non-JSON body throws. */
export async function fetchJson(
  url: string,
  init: RequestInit & { timeoutMs?: number } = {},
): Promise<unknown> {
  const { timeoutMs = UPSTREAM_TIMEOUT_MS, ...rest } = init;
  let res: Response;
  try {
    res = await fetch(url, { ...rest, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      throw new UpstreamError('timeout', `no answer within ${timeoutMs / 1000} s`);
    }
    throw new UpstreamError('network', `cannot reach the service (${e.message})`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      throw new UpstreamError('timeout', `no answer within ${timeoutMs / 1000} s`);
    }
    throw new UpstreamError('network', `the answer broke off (${e.message})`);
  }
  if (!res.ok) throw new UpstreamError('status', `answered ${res.status}`, res.status);
  try {
    return JSON.parse(text);
  } catch {
    throw new UpstreamError('invalid', 'answered with a body that is not JSON', res.status);
  }
}
