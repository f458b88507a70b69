import type { Readable } from 'node:stream';

// Where uploaded files live: a folder under the data directory, served at
// /storage/v1/object/public/ (local.ts, the default), or an S3-compatible bucket (s3.ts).

export interface StorageBackend {
  /** Which backend this is (GET /health/ shows it): `local` or `s3`. */
  readonly kind: 'local' | 's3';
  /**
   * Stores a file under `key` (e.g. `events/12/3f1c….jpg`), from memory or streamed; returns its
   * public URL. A stream that fails leaves nothing behind.
   */
  put(key: string, data: Buffer | Readable, contentType: string): Promise<string>;
  /** Removes a file; missing files are not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes what failed or killed uploads left: unfinished `.tmp` files, and files no record points
   * to, both only when older than `olderThanMs` (an upload in progress is younger). S3 counts
   * multipart uploads a killed process left open as `tmp`.
   */
  sweep?(
    isReferenced: (key: string) => boolean,
    olderThanMs: number,
  ): Promise<{ tmp: number; orphans: number }>;
  /** Reads a file for serving (local backends only). */
  get?(key: string): Promise<{ data: Buffer; contentType: string } | null>;
  /** The key behind one of this backend's public URLs, else null (records hold URLs). */
  keyFromUrl?(url: string): string | null;
  /** Lets go of connections at shutdown. */
  close?(): void;
}

/** Image types recognised by their first bytes (never by name or declared type). */
export function sniffImage(data: Buffer): { contentType: string; extension: string } | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) {
    return { contentType: 'image/jpeg', extension: 'jpg' };
  }
  if (
    data.length >= 8 &&
    data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  ) {
    return { contentType: 'image/png', extension: 'png' };
  }
  if (data.length >= 6 && ['GIF87a', 'GIF89a'].includes(data.subarray(0, 6).toString('latin1'))) {
    return { contentType: 'image/gif', extension: 'gif' };
  }
  if (
    data.length >= 12 &&
    data.subarray(0, 4).toString('latin1') === 'RIFF' &&
    data.subarray(8, 12).toString('latin1') === 'WEBP'
  ) {
    return { contentType: 'image/webp', extension: 'webp' };
  }
  return null;
}

/** Reads at least `n` bytes (fewer at the end) from a paused stream and puts them back in front. */
export async function readHead(stream: Readable, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let len = 0;
  while (len < n) {
    const chunk = stream.read() as Buffer | null;
    if (chunk !== null) {
      chunks.push(chunk);
      len += chunk.length;
      continue;
    }
    if (stream.readableEnded || stream.destroyed) break;
    await new Promise<void>((resolve, reject) => {
      const off = () => {
        stream.off('readable', done);
        stream.off('end', done);
        stream.off('error', fail);
        stream.off('close', closed);
      };
      const done = () => {
        off();
        resolve();
      };
      const fail = (err: Error) => {
        off();
        reject(err);
      };
      stream.on('readable', done);
      stream.on('end', done);
      // Destroyed without an error (an aborted upload): it will never end.
      const closed = () => (stream.readableEnded ? done() : fail(new Error('stream closed before its end')));
      stream.on('error', fail);
      stream.on('close', closed);
    });
  }
  const head = Buffer.concat(chunks);
  if (head.length > 0) stream.unshift(head);
  return head;
}
