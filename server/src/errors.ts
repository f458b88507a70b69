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
