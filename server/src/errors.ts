// The one error shape of the API: `{error, details?}` (interface spec "Errors").

/** An error that answers with a given status and the spec's body. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return {
      error: this.message,
      ...(this.details === undefined ? {} : { details: this.details }),
      ...this.extra,
    };
  }
}

export const UNKNOWN_ENDPOINT = 'Unknown endpoint or API version';
export const INTERNAL_ERROR = 'Internal server error';
export const STORAGE_FULL = 'Storage full';
export const STORAGE_UNAVAILABLE = 'Storage unavailable';

/** The `code` of a 503 for a city whose graph is still loading (the server has just started). */
export const CITY_LOADING = 'CITY_LOADING';
/**
 * Seconds a client is asked to wait before trying a loading city again: a whole city takes tens of
 * seconds to load, and a 503 costs the server next to nothing, so a short wait serves the city soon
 * after it is ready.
 */
export const CITY_LOADING_RETRY_S = 5;

/**
 * 503 for a request that needs a city whose graph is still loading (`name` null when the city is
 * not known yet: a graph still loading may be the one covering the request), with `Retry-After`.
 */
export function cityLoading(name: string | null, retryAfterS = CITY_LOADING_RETRY_S): HttpError {
  return new HttpError(
    503,
    name
      ? `Routing for ${name} is starting: its graph is still loading`
      : 'Routing is starting: city graphs are still loading',
    `Try again in ${retryAfterS} seconds.`,
    { code: CITY_LOADING, retry_after_seconds: retryAfterS },
    { 'Retry-After': String(retryAfterS) },
  );
}

/** A write refused for lack of space: the disk (ENOSPC), a quota (EDQUOT), SQLite's SQLITE_FULL or PostgreSQL's disk_full (53100). */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === '53100';
}

/** An error whose body is given whole (the profile update's field → messages map). */
export class HttpBodyError extends HttpError {
  constructor(
    statusCode: number,
    readonly raw: Record<string, unknown>,
  ) {
    super(statusCode, 'Invalid request');
  }

  override body(): Record<string, unknown> {
    return this.raw;
  }
}
